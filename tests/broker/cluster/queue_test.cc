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

// Found by answers_fuzzer: a ':' before the '-' (no squeue prints it) read
// past the range's end and threw out of the squeue reader; huge ranges
// overflowed the count.
TEST(ArrayTaskCountTest, WhatSqueueNeverPrintsCountsAsOneAndNeverThrows) {
  EXPECT_EQ(ArrayTaskCount("1:5-3"), 1);
  EXPECT_EQ(ArrayTaskCount(":0-7"), 1);
  EXPECT_EQ(ArrayTaskCount("3--5"), 1);
  EXPECT_EQ(ArrayTaskCount("0-9223372036854775807,0-9223372036854775807"), std::int64_t{1} << 32);
}

}  // namespace
}  // namespace skyslurm::cluster
