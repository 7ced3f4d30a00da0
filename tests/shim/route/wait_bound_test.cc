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
  EXPECT_FALSE(wait.GiveUp(1620, "cluster beta", "beta:7"));
  auto error = wait.GiveUp(1621, "cluster beta", "beta:7");
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("cluster beta has not answered about beta:7 for 621 s"));
  EXPECT_THAT(*error, HasSubstr("skyslurm status beta:7"));
}

TEST(WaitBoundTest, EachAnswerStartsTheSilenceAgain) {
  WaitBound wait(std::nullopt, 20, 0);
  EXPECT_EQ(wait.bound_seconds(), 20);
  wait.Answered(100);
  EXPECT_FALSE(wait.GiveUp(120, "skyslurmd", "sky-1"));
  EXPECT_TRUE(wait.GiveUp(121, "skyslurmd", "sky-1"));
}

}  // namespace
}  // namespace skyslurm::route
