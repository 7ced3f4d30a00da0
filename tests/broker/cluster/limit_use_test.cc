#include "broker/cluster/limit_use.h"
#include "broker/backend/slurm/slurm_state.h"

#include <gtest/gtest.h>

namespace skyslurm::cluster {
namespace {

constexpr std::time_t kT = 1'800'000'000;

QueuedJob Ended(std::string user, std::int64_t run_s, std::int64_t limit_min,
                std::string state = "COMPLETED", std::string nodes = "n1") {
  QueuedJob j;
  j.user = std::move(user);
  j.state = std::move(state);
  j.phase = backend::SlurmPhaseOf(j.state);
  j.start_time = kT;
  j.end_time = kT + run_s;
  j.time_limit_minutes = limit_min;
  j.nodelist = std::move(nodes);
  return j;
}

TEST(LimitUseTest, FewerThanFiveEndedJobsSayNothing) {
  std::vector<QueuedJob> jobs;
  for (int i = 0; i < LimitUse::kFewest - 1; ++i) jobs.push_back(Ended("ann", 60, 10));
  const LimitUse use = LearnLimitUse(jobs);
  EXPECT_EQ(use.ShareOf("ann"), 1.0);
  EXPECT_EQ(use.JobsBehind("ann"), 0);
}

TEST(LimitUseTest, RunTimeOverLimitSummedOverTheJobs) {
  // 5 jobs of 10 min limits: 2, 3, 4, 5 and 6 min: 20 of 50 min.
  std::vector<QueuedJob> jobs;
  for (int m = 2; m <= 6; ++m) jobs.push_back(Ended("ann", m * 60, 10));
  const LimitUse use = LearnLimitUse(jobs);
  EXPECT_DOUBLE_EQ(use.ShareOf("ann"), 0.4);
  EXPECT_DOUBLE_EQ(use.ShareOf("bob"), 0.4);  // no jobs of his: everyone's
  EXPECT_EQ(use.JobsBehind("bob"), 5);
}

TEST(LimitUseTest, AUsersOwnJobsWhenEnoughElseEveryones) {
  std::vector<QueuedJob> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(Ended("ann", 60, 10));   // 10%
  for (int i = 0; i < 5; ++i) jobs.push_back(Ended("bob", 540, 10));  // 90%
  for (int i = 0; i < 4; ++i) jobs.push_back(Ended("cy", 600, 10));   // too few
  const LimitUse use = LearnLimitUse(jobs);
  EXPECT_DOUBLE_EQ(use.ShareOf("ann"), 0.1);
  EXPECT_DOUBLE_EQ(use.ShareOf("bob"), 0.9);
  // Too few of his own: everyone's, ann's 300 s, bob's 2700 s and his 2400
  // s of 14 limits of 600 s.
  EXPECT_DOUBLE_EQ(use.ShareOf("cy"), (300.0 + 2700.0 + 2400.0) / 8400.0);
  EXPECT_EQ(use.JobsBehind("cy"), 14);
}

// Users resubmit the same job with the same limit: a user's jobs of the
// same limit say most (the testbed benchmark's 1-minute jobs ran a few
// seconds, its 10-minute ones half their limits).
TEST(LimitUseTest, AUsersJobsOfTheSameLimitFirst) {
  std::vector<QueuedJob> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(Ended("ann", 6, 1));     // 10%
  for (int i = 0; i < 5; ++i) jobs.push_back(Ended("ann", 300, 10));  // 50%
  for (int i = 0; i < 4; ++i) jobs.push_back(Ended("ann", 600, 20));  // too few
  const LimitUse use = LearnLimitUse(jobs);
  EXPECT_DOUBLE_EQ(use.ShareOf("ann", 1), 0.1);
  EXPECT_DOUBLE_EQ(use.ShareOf("ann", 10), 0.5);
  EXPECT_EQ(use.JobsBehind("ann", 10), 5);
  // Of any limit: 30 + 1500 + 2400 s of 300 + 3000 + 4800.
  EXPECT_DOUBLE_EQ(use.ShareOf("ann", 20), 3930.0 / 8100.0);
  EXPECT_EQ(use.JobsBehind("ann", 20), 14);
  EXPECT_DOUBLE_EQ(use.ShareOf("bob", 1), 3930.0 / 8100.0);
}

// A job cancelled while pending never ran (no node list, start = end): it
// says nothing of run times (every move of skyslurm's cancels one).
TEST(LimitUseTest, OnlyJobsThatHeldNodesAndEndedCount) {
  std::vector<QueuedJob> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(Ended("ann", 300, 10));
  for (int i = 0; i < 5; ++i) jobs.push_back(Ended("ann", 0, 10, "CANCELLED", ""));
  jobs.push_back(Ended("ann", 0, 10, "CANCELLED by 0", "(null)"));
  jobs.push_back(Ended("ann", 60, 10, "RUNNING"));
  jobs.push_back(Ended("ann", 60, 10, "PENDING", ""));
  jobs.push_back(Ended("ann", 60, 0));  // no limit known
  const LimitUse use = LearnLimitUse(jobs);
  EXPECT_EQ(use.all.jobs, 5);
  EXPECT_DOUBLE_EQ(use.ShareOf("ann"), 0.5);
  // Cancelled, failed, timed out after running: they freed their GPUs then.
  jobs = {Ended("a", 60, 10, "CANCELLED"), Ended("a", 60, 10, "FAILED"),
          Ended("a", 660, 10, "TIMEOUT"), Ended("a", 60, 10, "NODE_FAIL"),
          Ended("a", 60, 10, "OUT_OF_MEMORY")};
  // The one past its limit (OverTimeLimit) counts its limit: 4 + 10 of 50 min.
  EXPECT_DOUBLE_EQ(LearnLimitUse(jobs).ShareOf("a"), 14.0 / 50.0);
}

TEST(LimitUseTest, NeverBelowFivePercent) {
  std::vector<QueuedJob> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(Ended("ann", 1, 60));
  EXPECT_DOUBLE_EQ(LearnLimitUse(jobs).ShareOf("ann"), 0.05);
}

}  // namespace
}  // namespace skyslurm::cluster
