#include "broker/cluster/queue.h"

#include <gtest/gtest.h>

namespace skyslurm::cluster {
namespace {

TEST(ArrayTaskCountTest, CountsRangesStepsAndListsButNotTheThrottle) {
  EXPECT_EQ(ArrayTaskCount("1-3"), 3);
  EXPECT_EQ(ArrayTaskCount("1-3,7%2"), 4);
  EXPECT_EQ(ArrayTaskCount("0-10:5"), 3);
  EXPECT_EQ(ArrayTaskCount("4"), 1);
  EXPECT_EQ(ArrayTaskCount(""), 1);
}

}  // namespace
}  // namespace skyslurm::cluster
