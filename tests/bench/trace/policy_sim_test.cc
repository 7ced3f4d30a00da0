#include "bench/trace/policy_sim.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::trace {
namespace {

const std::vector<ModelCluster> kTwo = {{"alpha", 1, 8, "h100"}, {"beta", 1, 8, "h100"}};

ReplayJob Job(std::string id, double submit, double runtime, int limit_min, int gpus = 8,
              std::string type = "") {
  ReplayJob j;
  j.id = std::move(id);
  j.submit_s = submit;
  j.runtime_s = runtime;
  j.time_limit_min = limit_min;
  j.gpus_per_node = gpus;
  j.gpu_type = std::move(type);
  return j;
}

std::vector<double> Waits(const SimResult& r) {
  std::vector<double> out;
  for (const auto& j : r.jobs) out.push_back(j.start - j.submit);
  return out;
}

TEST(PolicySimTest, EachPolicyPlacesTheSecondJobItsOwnWay) {
  Load load;
  load.jobs = {Job("first", 0, 100, 2), Job("second", 10, 100, 2)};
  const SimOptions options{.failover_timeout_s = 30};
  const SimResult home = SimulatePolicy(Policy::kHome, load, kTwo, options);
  EXPECT_THAT(Waits(home), ::testing::ElementsAre(0, 90));  // behind the first, on alpha
  EXPECT_EQ(home.jobs[1].cluster, "alpha");
  EXPECT_EQ(home.end, 200);
  EXPECT_EQ(home.busy_gpu_s.at("alpha"), 1600);
  const SimResult m = SimulatePolicy(Policy::kSlurmM, load, kTwo, options);
  EXPECT_THAT(Waits(m), ::testing::ElementsAre(0, 0));
  EXPECT_EQ(m.jobs[1].cluster, "beta");
  const SimResult rr = SimulatePolicy(Policy::kRoundRobin, load, kTwo, options);
  EXPECT_EQ(rr.jobs[0].cluster, "alpha");
  EXPECT_EQ(rr.jobs[1].cluster, "beta");
  // SkyPilot's: alpha first, pending 30 s, then beta.
  const SimResult failover = SimulatePolicy(Policy::kFailover, load, kTwo, options);
  EXPECT_THAT(Waits(failover), ::testing::ElementsAre(0, 30));
  EXPECT_EQ(failover.jobs[1].cluster, "beta");
  EXPECT_EQ(failover.jobs[1].moves, 1);
  EXPECT_EQ(failover.moves, 1);
}

// Limits make -M's estimates wrong: alpha's job will end in 10 s but its
// limit says 1000; beta's in 500, its limit 600. -M picks beta; the oracle,
// who knows the runtimes, alpha.
TEST(PolicySimTest, LimitsMisleadSlurmMAndNotTheOracle) {
  Load load;
  load.jobs = {Job("on-alpha", 0, 10, 17), Job("on-beta", 0, 500, 10), Job("third", 1, 60, 2)};
  const SimResult m = SimulatePolicy(Policy::kSlurmM, load, kTwo, {});
  const SimResult oracle = SimulatePolicy(Policy::kOracle, load, kTwo, {});
  EXPECT_EQ(m.jobs[2].cluster, "beta");
  EXPECT_EQ(m.jobs[2].start, 500);
  EXPECT_EQ(oracle.jobs[2].cluster, "alpha");
  EXPECT_EQ(oracle.jobs[2].start, 10);
}

// Federation's siblings: the third job queues on both clusters and starts
// where a GPU frees first (alpha at 10, its limit said 1020), its copy on
// beta cancelled there; -M, by limits, waits for beta's job (500). Each job
// runs once: the GPU time is the runtimes'.
TEST(PolicySimTest, FederationsSiblingsStartWhereAGpuFreesFirstAndRunOnce) {
  Load load;
  load.jobs = {Job("on-alpha", 0, 10, 17), Job("on-beta", 0, 500, 10), Job("third", 1, 60, 2)};
  const SimResult f = SimulatePolicy(Policy::kFederation, load, kTwo, {});
  EXPECT_EQ(f.jobs[0].cluster, "alpha");
  EXPECT_EQ(f.jobs[1].cluster, "beta");
  EXPECT_EQ(f.jobs[2].cluster, "alpha");
  EXPECT_EQ(f.jobs[2].start, 10);
  EXPECT_EQ(f.jobs[2].end, 70);
  EXPECT_EQ(f.busy_gpu_s.at("alpha"), 8 * (10 + 60));
  EXPECT_EQ(f.busy_gpu_s.at("beta"), 8 * 500);
  EXPECT_EQ(f.end, 500);
  EXPECT_EQ(f.moves, 0);
  EXPECT_EQ(PolicyNamed("federation"), Policy::kFederation);
}

TEST(PolicySimTest, TypesNarrowTheClustersAndTheHorizonCutsTheRest) {
  const std::vector<ModelCluster> mixed = {{"alpha", 1, 8, "h100"}, {"gamma", 1, 8, "a100"}};
  Load load;
  load.jobs = {Job("a100", 0, 100, 2, 8, "a100"), Job("b200", 0, 100, 2, 8, "b200"),
               Job("long", 0, 1000, 20, 8, "h100")};
  const SimResult r = SimulatePolicy(Policy::kHome, load, mixed, {.horizon_s = 500});
  EXPECT_EQ(r.jobs[0].cluster, "gamma");  // the home cannot run it
  EXPECT_EQ(r.unplaced, 1);
  EXPECT_EQ(r.jobs[1].start, kNever);
  EXPECT_EQ(r.jobs[2].end, kNever);  // running at the horizon: cut
  EXPECT_EQ(r.busy_gpu_s.at("alpha"), 8 * 500);
  EXPECT_EQ(PolicyName(Policy::kSlurmM), "slurm-m");
}

// skyslurm places by the clusters' estimates (alpha's 600 s beats beta's
// 1200 by the limits) and, when beta's job ends early, its look weighs the
// job pending on alpha past migrate_after (120 s) and moves it: beta starts
// it now, 475 s before alpha would (migrate_gain 300).
TEST(PolicySimTest, SkyslurmPlacesByEstimateAndMovesAJobPendingPastMigrateAfter) {
  Load load;
  load.jobs = {Job("a", 0, 600, 10), Job("b", 0, 50, 20), Job("c", 1, 60, 2)};
  const SimResult sky = SimulatePolicy(Policy::kSkyslurm, load, kTwo, {});
  EXPECT_EQ(sky.jobs[0].cluster, "alpha");  // the home wins the tie
  EXPECT_EQ(sky.jobs[1].cluster, "beta");
  EXPECT_EQ(sky.jobs[2].cluster, "beta");
  EXPECT_EQ(sky.jobs[2].moves, 1);
  EXPECT_EQ(sky.jobs[2].start, 125);  // the first look (every 5 s) past 120 s pending
  EXPECT_EQ(sky.moves, 1);
  EXPECT_EQ(sky.decisions, 3 + 1);  // three placements, one weighing
  // -M never moves it: it waits for alpha.
  const SimResult m = SimulatePolicy(Policy::kSlurmM, load, kTwo, {});
  EXPECT_EQ(m.jobs[2].cluster, "alpha");
  EXPECT_EQ(m.jobs[2].start, 600);
  // Not the gain: with migrate_gain 500 it stays.
  SimOptions patient;
  patient.daemon.migrate_gain = 500;
  EXPECT_EQ(SimulatePolicy(Policy::kSkyslurm, load, kTwo, patient).jobs[2].start, 600);
}

TEST(PolicySimTest, ScaledOptionsDivideEveryTimeAndKeepWholeSeconds) {
  const SimOptions o = ScaledOptions(60);
  EXPECT_EQ(o.failover_timeout_s, 2);
  EXPECT_EQ(o.daemon.poll_interval, 1);  // 5/60: a second at least
  EXPECT_EQ(o.daemon.migrate_after, 2);
  EXPECT_EQ(o.daemon.migrate_gain, 5);
  EXPECT_EQ(o.tie_tolerance_s, 1);
  EXPECT_EQ(o.daemon.moves_per_cluster, 600);
  EXPECT_EQ(PolicyNamed("round-robin"), Policy::kRoundRobin);
  EXPECT_EQ(PolicyNamed("skyslurm"), Policy::kSkyslurm);
  EXPECT_FALSE(PolicyNamed("fifo"));
}

}  // namespace
}  // namespace skyslurm::trace
