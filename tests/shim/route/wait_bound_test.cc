#include "shim/route/wait_bound.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::route {
namespace {

using ::testing::HasSubstr;

// Regression (issue 11): sbatch --wait retried forever once the job's
// cluster stopped answering.
TEST(WaitBoundTest, GivesUpAfterTheTimeLimitPlusDeadAfter) {
  WaitBound wait(10, 20, 1000);
  EXPECT_EQ(wait.bound_seconds(), 620);
  EXPECT_FALSE(wait.GiveUp(1620, "cluster beta", "beta:7", "later"));
  auto error = wait.GiveUp(1621, "cluster beta", "beta:7", "skyslurm queue shows it");
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("cluster beta has not answered about beta:7 for 621 s"));
  EXPECT_THAT(*error, HasSubstr("it may still run: skyslurm queue shows it"));
}

TEST(WaitBoundTest, EachAnswerStartsTheSilenceAgain) {
  WaitBound wait(std::nullopt, 20, 0);
  EXPECT_EQ(wait.bound_seconds(), 3620);  // no time limit known: an hour
  wait.Answered(100);
  EXPECT_FALSE(wait.GiveUp(3720, "skyslurmd", "sky-1", "x"));
  EXPECT_TRUE(wait.GiveUp(3721, "skyslurmd", "sky-1", "x"));
}

}  // namespace
}  // namespace skyslurm::route
