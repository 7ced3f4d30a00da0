#include "bench/trace/replay_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::trace {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// Three jobs over a 100 s window on alpha (1 node of 4 GPUs) at time factor
// 2: waits 0, 10 and 30 replay seconds; the last runs past the window.
struct Fixture {
  Load load;
  SimResult result;
  std::vector<ModelCluster> clusters = {{"alpha", 1, 4, "h100"}, {"beta", 1, 4, "h100"}};
  Fixture() {
    load.window_s = 100;
    for (int i = 0; i < 3; ++i) {
      ReplayJob j;
      j.id = std::to_string(i);
      j.gpus_per_node = 2;
      load.jobs.push_back(j);
    }
    result.jobs = {
        {"0", 0, 0, 50, "alpha"}, {"1", 10, 20, 60, "alpha"}, {"2", 40, 70, kNever, "alpha"}};
    result.moves = 1;
    result.decisions = 4;
    result.decision_s = 0.002;
  }
};

TEST(ReplayReportTest, WaitsUtilisationAndCutsInTraceSeconds) {
  Fixture f;
  const PolicyStats s = Summarise("skyslurm", f.load, f.result, f.clusters, 2);
  EXPECT_EQ(s.started, 3);
  EXPECT_THAT(s.waits, ElementsAre(0, 20, 60));
  EXPECT_DOUBLE_EQ(s.mean_wait_s, (0 + 20 + 60) / 3.0);
  EXPECT_EQ(s.median_wait_s, 20);
  EXPECT_EQ(s.p95_wait_s, 60);
  EXPECT_EQ(s.makespan_s, 120);  // the last end seen, 60, times 2
  EXPECT_EQ(s.cut, 1);
  // 2 GPUs for 50 + 40 + 30 s of 4 GPUs for 100 s.
  EXPECT_DOUBLE_EQ(s.utilisation.at("alpha"), 2.0 * 120 / 400);
  EXPECT_EQ(s.utilisation.at("beta"), 0);
  EXPECT_DOUBLE_EQ(s.decision_us, 500);
  const std::string table = MarkdownTable({s});
  EXPECT_THAT(table, HasSubstr("| policy | jobs | mean wait s |"));
  EXPECT_THAT(table,
              HasSubstr("| skyslurm | 3 | 27 | 20 | 60 | 120 | alpha 60%, beta 0% | 1 | 1 | 0 |"));
}

TEST(ReplayReportTest, BusyGpusStepsAtStartsAndEndsUpToTheWindow) {
  Fixture f;
  EXPECT_THAT(
      BusyGpus(f.load, f.result, "alpha", 1),
      ElementsAre(Pair(0, 2), Pair(20, 4), Pair(50, 2), Pair(60, 0), Pair(70, 2), Pair(100, 0)));
  EXPECT_THAT(BusyGpus(f.load, f.result, "beta", 1), ElementsAre(Pair(0, 0), Pair(100, 0)));
}

TEST(ReplayReportTest, QuantileByNearestRank) {
  EXPECT_EQ(Quantile({}, 0.5), 0);
  EXPECT_EQ(Quantile({1, 2, 3, 4}, 0.5), 2);
  EXPECT_EQ(Quantile({1, 2, 3, 4}, 0.95), 4);
  EXPECT_EQ(Quantile({7}, 0), 7);
}

}  // namespace
}  // namespace skyslurm::trace
