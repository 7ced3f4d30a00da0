#include "broker/cloud/node_time.h"

#include <gtest/gtest.h>

#include <numeric>

namespace skyslurm::cloud {
namespace {

double Total(const std::map<std::string, double>& m) {
  return std::accumulate(m.begin(), m.end(), 0.0,
                         [](double sum, const auto& kv) { return sum + kv.second; });
}

// One node booted for one job: its boot, its run and the idle tail are all
// that job's, as the provider bills them.
TEST(NodeTimeTest, OneJobPaysForItsBootItsRunAndTheIdleTail) {
  const std::vector<PowerUp> ledger = {{"n1", "cloud", 100, 120, 260}};
  const std::vector<NodeUse> uses = {{"7", {"n1"}, 120, 200}};
  auto charged = AttributeNodeSeconds(ledger, uses, 1000);
  EXPECT_DOUBLE_EQ(charged["7"], 160);
  EXPECT_EQ(charged.size(), 1u);
}

TEST(NodeTimeTest, JobsSharingANodeShareItsTimeFairly) {
  // Boot 100-120; job 1 120-220; job 2 170-240; tail to 300.
  const std::vector<PowerUp> ledger = {{"n1", "cloud", 100, 120, 300}};
  const std::vector<NodeUse> uses = {{"1", {"n1"}, 120, 220}, {"2", {"n1"}, 170, 240}};
  auto charged = AttributeNodeSeconds(ledger, uses, 1000);
  // 1: boot 20 + alone 50 + half of 50 together = 95
  // 2: half of 50 together + alone 20 + the tail 60 = 105
  EXPECT_DOUBLE_EQ(charged["1"], 95);
  EXPECT_DOUBLE_EQ(charged["2"], 105);
  EXPECT_DOUBLE_EQ(Total(charged), 200);
}

TEST(NodeTimeTest, AGapBetweenTwoJobsIsTheEarlierOnesAndATwoNodeJobPaysForBoth) {
  const std::vector<PowerUp> ledger = {{"n1", "cloud", 0, 10, 100}, {"n2", "cloud", 0, 12, 60}};
  const std::vector<NodeUse> uses = {{"a", {"n1", "n2"}, 12, 40}, {"b", {"n1"}, 70, 90}};
  auto charged = AttributeNodeSeconds(ledger, uses, 1000);
  // n1: a gets 0-40 and the gap 40-70; b gets 70-90 and the tail 90-100.
  // n2: a gets all 60.
  EXPECT_DOUBLE_EQ(charged["a"], 70 + 60);
  EXPECT_DOUBLE_EQ(charged["b"], 30);
  EXPECT_DOUBLE_EQ(Total(charged), 160);
}

TEST(NodeTimeTest, ANodeStillUpIsBilledToNowAndAnUnusedPowerUpIsNobodys) {
  const std::vector<PowerUp> ledger = {{"n1", "cloud", 100, 130, 0}, {"n2", "spot", 100, 0, 150}};
  const std::vector<NodeUse> uses = {{"5", {"n1"}, 130, 0}, {"6", {"n3"}, 100, 200}};
  auto charged = AttributeNodeSeconds(ledger, uses, 400);
  EXPECT_DOUBLE_EQ(charged["5"], 300);
  EXPECT_DOUBLE_EQ(charged[""], 50);  // n2 booted and went down unused
  EXPECT_EQ(charged.count("6"), 0u);  // n3 is not in the ledger: not billed here
}

TEST(NodeTimeTest, AJobOnTheSameNodeInAnotherPowerUpIsChargedInEach) {
  const std::vector<PowerUp> ledger = {{"n1", "cloud", 0, 10, 50}, {"n1", "cloud", 200, 220, 300}};
  const std::vector<NodeUse> uses = {{"x", {"n1"}, 10, 20}, {"y", {"n1"}, 220, 240}};
  auto charged = AttributeNodeSeconds(ledger, uses, 1000);
  EXPECT_DOUBLE_EQ(charged["x"], 50);
  EXPECT_DOUBLE_EQ(charged["y"], 100);
}

// Regression: sacct's Start and End of a job shorter than a second are the
// same second; its node's power-up was charged to nobody.
TEST(NodeTimeTest, AJobThatEndedTheSecondItStartedPaysForItsNode) {
  const std::vector<PowerUp> ledger = {{"n3", "spot", 100, 107, 124}};
  const std::vector<NodeUse> uses = {{"15", {"n3"}, 113, 113}, {"9", {"n3"}, 90, 100}};
  auto charged = AttributeNodeSeconds(ledger, uses, 1000);
  EXPECT_DOUBLE_EQ(charged["15"], 24);
  EXPECT_EQ(charged.size(), 1u);
}

// A day's bill: only the seconds from its start count, each to the job that
// caused it (a job running across midnight pays its part of each day).
TEST(NodeTimeTest, OnlyTheSecondsSinceAPeriodsStartAreCounted) {
  const std::vector<PowerUp> ledger = {{"n1", "cloud", 0, 10, 100}, {"n2", "cloud", 20, 30, 40}};
  const std::vector<NodeUse> uses = {{"a", {"n1"}, 10, 60}, {"b", {"n1"}, 70, 80}};
  auto charged = AttributeNodeSeconds(ledger, uses, 1000, 50);
  EXPECT_DOUBLE_EQ(charged["a"], 10 + 10);  // 50-60 running, 60-70 the gap after it
  EXPECT_DOUBLE_EQ(charged["b"], 10 + 20);  // its run and the tail
  EXPECT_EQ(charged.count(""), 0u);         // n2 was down before 50
  EXPECT_DOUBLE_EQ(Total(AttributeNodeSeconds(ledger, uses, 1000, 25)), 75 + 15);
}

}  // namespace
}  // namespace skyslurm::cloud
