#include "broker/place/placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::place {
namespace {

using ::testing::HasSubstr;
using Kind = Verdict::Kind;

constexpr std::time_t kNow = 1'800'000'000;

Candidate At(std::string cluster, std::string partition, std::time_t start, bool home = false,
             int preference = 0) {
  Candidate c;
  c.cluster = std::move(cluster);
  c.partition = std::move(partition);
  c.start = start;
  c.home = home;
  c.preference = preference;
  return c;
}

TEST(PlacementTest, EarliestStartWins) {
  auto d = Place({At("alpha", "gpu", kNow + 600, true), At("beta", "h100-cluster", kNow + 5)}, {},
                 kNow);
  ASSERT_TRUE(d.chosen);
  EXPECT_EQ(*d.chosen, 1u);
  EXPECT_EQ(d.verdicts[1].kind, Kind::kChosen);
  EXPECT_EQ(d.verdicts[0].kind, Kind::kLater);
  EXPECT_EQ(d.verdicts[0].reason, "starts in 10 min, 10 min after beta");
  EXPECT_EQ(d.summary, "beta/h100-cluster: the earliest start (in 5 s)");
}

TEST(PlacementTest, WithinTheTieToleranceHomeWins) {
  auto d = Place({At("beta", "h100-cluster", kNow + 1), At("alpha", "gpu", kNow + 50, true)}, {},
                 kNow);
  ASSERT_TRUE(d.chosen);
  EXPECT_EQ(d.verdicts[*d.chosen].cluster, "alpha");
  EXPECT_EQ(d.verdicts[0].kind, Kind::kTied);
  EXPECT_THAT(d.summary, HasSubstr("the home cluster wins the tie"));
  // Outside the tolerance the earlier one wins even against home.
  auto later = Place({At("beta", "h100-cluster", kNow + 1), At("alpha", "gpu", kNow + 62, true)},
                     {}, kNow);
  EXPECT_EQ(later.verdicts[*later.chosen].cluster, "beta");
  Policy wide;
  wide.tie_tolerance = std::chrono::seconds(300);
  auto tolerant = Place({At("beta", "h100-cluster", kNow + 1), At("alpha", "gpu", kNow + 62, true)},
                        wide, kNow);
  EXPECT_EQ(tolerant.verdicts[*tolerant.chosen].cluster, "alpha");
}

TEST(PlacementTest, PreferenceBeatsHomeInATie) {
  auto d = Place({At("alpha", "gpu", kNow + 10, true, 0), At("gamma", "batch", kNow + 20, false, 2)},
                 {}, kNow);
  EXPECT_EQ(d.verdicts[*d.chosen].cluster, "gamma");
  EXPECT_THAT(d.summary, HasSubstr("preference 2 wins"));
}

// Issue 13: Kubernetes overflows; a Slurm peer wins a tie against it, and
// an earlier start on Kubernetes still wins outright.
TEST(PlacementTest, ASlurmClusterWinsATieOverKubernetes) {
  Candidate kappa = At("kappa", "default", kNow);
  kappa.overflow = true;
  auto d = Place({kappa, At("gamma", "batch", kNow + 30)}, {}, kNow);
  EXPECT_EQ(d.verdicts[*d.chosen].cluster, "gamma");
  EXPECT_THAT(d.summary, HasSubstr("a Slurm cluster wins the tie over Kubernetes"));
  EXPECT_EQ(d.verdicts[0].kind, Kind::kTied);
  auto sooner = Place({kappa, At("gamma", "batch", kNow + 600)}, {}, kNow);
  EXPECT_EQ(sooner.verdicts[*sooner.chosen].cluster, "kappa");
  // Home still comes first, as before.
  auto home = Place({At("gamma", "batch", kNow + 5), kappa, At("alpha", "gpu", kNow + 20, true)}, {},
                    kNow);
  EXPECT_EQ(home.verdicts[*home.chosen].cluster, "alpha");
}

TEST(PlacementTest, EveryCandidateGetsAVerdictWithItsReason) {
  Candidate excluded = At("delta", "", kNow);
  excluded.excluded = "not in --sky-any-cluster=beta";
  Candidate unreachable;
  unreachable.cluster = "beta";
  unreachable.unreachable = "slurm_load_partitions: Unable to contact slurm controller";
  Candidate infeasible;
  infeasible.cluster = "gamma";
  infeasible.infeasible = {"gamma has no H100 GPUs", "module x: none"};
  Candidate unknown;
  unknown.cluster = "epsilon";
  unknown.no_estimate = "sbatch --test-only refused the job: ...";
  auto d = Place({excluded, unreachable, infeasible, unknown, At("alpha", "gpu", kNow + 30, true)},
                 {}, kNow);
  ASSERT_EQ(d.verdicts.size(), 5u);
  EXPECT_EQ(d.verdicts[0].kind, Kind::kExcluded);
  EXPECT_EQ(d.verdicts[1].kind, Kind::kUnreachable);
  EXPECT_EQ(d.verdicts[1].reason, "slurm_load_partitions: Unable to contact slurm controller");
  EXPECT_EQ(d.verdicts[2].kind, Kind::kInfeasible);
  EXPECT_EQ(d.verdicts[2].reason, "gamma has no H100 GPUs; module x: none");
  EXPECT_EQ(d.verdicts[3].kind, Kind::kNoEstimate);
  EXPECT_EQ(d.verdicts[4].kind, Kind::kChosen);
}

TEST(PlacementTest, NothingRunnable) {
  Candidate c;
  c.cluster = "gamma";
  c.infeasible = {"no"};
  auto d = Place({c}, {}, kNow);
  EXPECT_FALSE(d.chosen);
  EXPECT_EQ(d.summary, "no cluster can run the job");
  EXPECT_FALSE(Place({}, {}, kNow).chosen);
}

TEST(PlacementTest, TheClustersFirstChoiceOfPartitionWinsItsTie) {
  Candidate first = At("beta", "h100-cluster", kNow + 2);
  Candidate second = At("beta", "debug", kNow + 1);
  second.partition_rank = 1;
  auto d = Place({first, second}, {}, kNow);
  EXPECT_EQ(d.verdicts[*d.chosen].partition, "h100-cluster");
  EXPECT_THAT(d.summary, HasSubstr("beta's first choice of partition wins"));
}

TEST(PlacementTest, DeterministicAmongEquals) {
  auto d = Place({At("gamma", "b", kNow), At("beta", "a", kNow)}, {}, kNow);
  EXPECT_EQ(d.verdicts[*d.chosen].cluster, "beta");
}

TEST(PlacementTest, FormatWait) {
  EXPECT_EQ(FormatWait(kNow - 5, kNow), "now");
  EXPECT_EQ(FormatWait(kNow + 45, kNow), "in 45 s");
  EXPECT_EQ(FormatWait(kNow + 720, kNow), "in 12 min");
  EXPECT_EQ(FormatWait(kNow + 3 * 3600 + 300, kNow), "in 3 h 5 min");
  EXPECT_EQ(FormatWait(kNow + 3 * 86400, kNow), "in 3 d 0 h");
}

}  // namespace
}  // namespace skyslurm::place
