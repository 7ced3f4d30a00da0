#include "broker/cloud/cost.h"

#include <gtest/gtest.h>

namespace skyslurm::cloud {
namespace {

TEST(CostTest, ANodesHourCostsItsGpusTimesThePrice) {
  EXPECT_DOUBLE_EQ(NodeTimeCost(3600, 8, 4.0), 32.0);
  EXPECT_DOUBLE_EQ(NodeTimeCost(900, 8, 4.0), 8.0);
  EXPECT_DOUBLE_EQ(NodeTimeCost(3600, 0, 0.5), 0.5);  // a CPU node: one unit
}

TEST(CostTest, TheExpectedCostHoldsWholeNodesFromBootToPowerDown) {
  ExpectedUse use;
  use.nodes = 2;
  use.gpus_per_node = 8;
  use.run = std::chrono::minutes(60);
  use.boot = std::chrono::minutes(3);
  use.idle_tail = std::chrono::minutes(10);
  // 2 nodes x 73 min x 8 GPUs x $2.50/GPU-hour
  EXPECT_DOUBLE_EQ(ExpectedCost(use, 2.5), 2 * 73.0 / 60 * 8 * 2.5);
  use.boot = {};  // its nodes up already
  EXPECT_DOUBLE_EQ(ExpectedCost(use, 2.5), 2 * 70.0 / 60 * 8 * 2.5);
  EXPECT_DOUBLE_EQ(ExpectedCost(use, 0), 0);  // an on-premises cluster
}

}  // namespace
}  // namespace skyslurm::cloud
