#include "bench/trace/trace_load.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace skyslurm::trace {
namespace {

// The testbed's shape: alpha 2 x 8 H100, beta 2 x 4 H100 (another name), gamma 2 x 8 A100.
const std::vector<ModelCluster> kClusters = {
    {"alpha", 2, 8, "h100"}, {"beta", 2, 4, "nvidia_h100_80gb_hbm3"}, {"gamma", 2, 8, "a100"}};

TraceJob Job(std::string id, double submit, std::optional<double> runtime, int gpus,
             std::optional<int> nodes = std::nullopt, std::string type = "") {
  TraceJob j;
  j.id = std::move(id);
  j.submit_s = submit;
  j.runtime_s = runtime;
  j.gpus = gpus;
  j.nodes = nodes;
  j.gpu_type = std::move(type);
  return j;
}

TEST(TraceLoadTest, ShapesFitTheLargestNodeAndTheLargestClusterCaps) {
  const Load load =
      ShapeLoad({Job("one", 0, 60, 1), Job("eight", 0, 60, 8), Job("twelve", 0, 60, 12),
                 Job("two-by-four", 0, 60, 8, 2), Job("big", 0, 60, 64), Job("cpu", 0, 60, 0),
                 Job("never", 0, std::nullopt, 1)},
                kClusters, {.load = 0});
  ASSERT_EQ(load.jobs.size(), 6u);
  auto shape = [&](std::size_t i) {
    return std::to_string(load.jobs[i].nodes) + "x" + std::to_string(load.jobs[i].gpus_per_node);
  };
  EXPECT_EQ(shape(0), "1x1");
  EXPECT_EQ(shape(1), "1x8");
  EXPECT_EQ(shape(2), "2x8");  // above a node: whole nodes of the largest size
  EXPECT_EQ(shape(3), "2x4");  // the trace's nodes, when they fit
  EXPECT_EQ(shape(4), "2x8");  // capped to the largest cluster
  EXPECT_TRUE(load.jobs[4].capped);
  EXPECT_EQ(shape(5), "1x0");
  EXPECT_EQ(load.capped, 1);
  EXPECT_EQ(load.never_ran, 1);
}

TEST(TraceLoadTest, TypesAreTheTracesOrASeededDrawByCapacity) {
  std::vector<TraceJob> window;
  for (int i = 0; i < 4000; ++i) window.push_back(Job("j" + std::to_string(i), i, 60, 1));
  window.push_back(Job("typed", 5000, 60, 1, 1, "a100"));
  const Load load = ShapeLoad(window, kClusters, {.load = 0, .seed = 7});
  std::map<std::string, int> types;
  for (const auto& j : load.jobs) ++types[j.gpu_type];
  EXPECT_EQ(load.jobs.back().gpu_type, "a100");
  // Half untyped; the rest by the GPUs of each type (16 h100, 8 beta's, 16 a100 of 40).
  EXPECT_NEAR(types[""], 2000, 120);
  EXPECT_NEAR(types["h100"], 800, 90);
  EXPECT_NEAR(types["nvidia_h100_80gb_hbm3"], 400, 70);
  // The same seed, the same load; another seed, another.
  const Load again = ShapeLoad(window, kClusters, {.load = 0, .seed = 7});
  const Load other = ShapeLoad(window, kClusters, {.load = 0, .seed = 8});
  int same = 0, differs = 0;
  for (std::size_t i = 0; i < load.jobs.size(); ++i) {
    same += load.jobs[i].gpu_type == again.jobs[i].gpu_type &&
            load.jobs[i].time_limit_min == again.jobs[i].time_limit_min;
    differs += load.jobs[i].gpu_type != other.jobs[i].gpu_type;
  }
  EXPECT_EQ(same, static_cast<int>(load.jobs.size()));
  EXPECT_GT(differs, 1000);
}

TEST(TraceLoadTest, LimitsOverestimateByOneToFourTimesInWholeMinutes) {
  std::vector<TraceJob> window;
  for (int i = 0; i < 1000; ++i) window.push_back(Job("j" + std::to_string(i), i, 600, 1));
  const Load load = ShapeLoad(window, kClusters, {.load = 0});
  int lo = 1000, hi = 0;
  for (const auto& j : load.jobs) {
    lo = std::min(lo, j.time_limit_min);
    hi = std::max(hi, j.time_limit_min);
  }
  EXPECT_EQ(lo, 11);  // 10 min of runtime: at least a minute more
  EXPECT_GE(hi, 38);
  EXPECT_LE(hi, 40);
}

TEST(TraceLoadTest, ArrivalsStretchToTheAskedLoadAndEveryTimeScalesByTheFactor) {
  // 40 GPUs over 1000 s: 40,000 GPU-seconds. Offered: 5 jobs x 8 GPUs x 100 s
  // in the window's first half: 4,000, 0.1.
  std::vector<TraceJob> window;
  for (int i = 0; i < 5; ++i) window.push_back(Job("j" + std::to_string(i), i * 100, 100, 8));
  const Load load =
      ShapeLoad(window, kClusters, {.window_s = 1000, .load = 0.05, .time_factor = 10, .seed = 1});
  EXPECT_DOUBLE_EQ(load.offered_load, 0.1);
  EXPECT_NEAR(load.arrival_scale, 2.0, 1e-9);  // 0.1 offered -> 0.05
  EXPECT_NEAR(load.replay_load, 0.05, 1e-9);
  EXPECT_NEAR(load.window_s, 200, 1e-6);         // 1000 s x 2 / 10
  EXPECT_NEAR(load.jobs[4].submit_s, 80, 1e-6);  // 400 s x 2 / 10
  EXPECT_DOUBLE_EQ(load.jobs[4].runtime_s, 10);  // runtimes are not stretched
  for (const auto& j : load.jobs) EXPECT_GE(j.time_limit_min * 60, j.runtime_s);
}

// A job of a month in a window of 1000 s offers the window 1000 s, however
// the arrivals are scaled: with it, the load asked for is reached by the
// others alone, and a load out of reach is reported as the one reached.
TEST(TraceLoadTest, AJobRunningPastTheWindowOffersOnlyTheWindow) {
  std::vector<TraceJob> window = {Job("month", 0, 30 * 86400.0, 8)};
  for (int i = 0; i < 4; ++i) window.push_back(Job("j" + std::to_string(i), 500, 100, 8));
  Load load = ShapeLoad(window, kClusters, {.window_s = 1000, .load = 0.3, .seed = 1});
  // 8 x 1000 (the month's share) + 4 x 8 x 100 = 11,200 of 40,000.
  EXPECT_DOUBLE_EQ(load.offered_load, 0.28);
  EXPECT_NEAR(load.replay_load, 0.3, 1e-9);
  EXPECT_LT(load.arrival_scale, 1);  // squeezed a little
  // The month alone offers 0.2 at any scale; 0.5 is out of reach.
  load = ShapeLoad({Job("month", 0, 30 * 86400.0, 8)}, kClusters,
                   {.window_s = 1000, .load = 0.5, .seed = 1});
  EXPECT_NEAR(load.replay_load, 0.2, 1e-9);
}

// The rules every policy places by: a type narrows the clusters, nodes and
// GPUs per node must fit; round-robin's turn and the failover's next go
// round the order, and a job only one cluster can run stays there.
TEST(TraceLoadTest, TheClustersThatCanRunAJobInTurn) {
  const std::vector<ModelCluster> three = {
      {"alpha", 2, 8, "H100"}, {"beta", 2, 4, "H100"}, {"gamma", 3, 8, "A100"}};
  ReplayJob any;
  any.nodes = 1;
  any.gpus_per_node = 8;
  EXPECT_THAT(AbleClusters(any, three), ::testing::ElementsAre(0, 2));  // beta's nodes hold 4
  ReplayJob a100 = any;
  a100.gpu_type = "A100";
  EXPECT_THAT(AbleClusters(a100, three), ::testing::ElementsAre(2));
  ReplayJob wide = any;
  wide.nodes = 3;
  EXPECT_FALSE(CanRun(wide, three[0]));
  EXPECT_TRUE(CanRun(wide, three[2]));
  EXPECT_EQ(NextAble(any, three, 1), 2u);
  EXPECT_EQ(NextAble(any, three, 3), 0u);   // round again after the last
  EXPECT_EQ(NextAble(a100, three, 3), 2u);  // the failover's next of gamma: gamma, it stays
  ReplayJob b200 = any;
  b200.gpu_type = "B200";
  EXPECT_EQ(NextAble(b200, three, 0), std::nullopt);
}

}  // namespace
}  // namespace skyslurm::trace
