// A sky job's array as Slurm lists it, task by task, folded into one job
// (issue 16): the daemon follows it as it submitted it.
#include "broker/backend/array_tasks.h"

#include <gtest/gtest.h>

#include "broker/backend/slurm/slurm_state.h"

namespace skyslurm::backend {
namespace {

JobInfo Row(const std::string& id, const std::string& state, const std::string& sky = "sky-1",
            std::time_t start = 0, int exit_code = 0) {
  JobInfo j;
  j.key = {"alpha", id};
  j.sky_id = sky;
  j.state = state;
  j.phase = SlurmPhaseOf(state);
  j.reason = state == "PENDING" ? "JobArrayTaskLimit" : "None";
  j.submit_time = 100;
  j.start_time = start;
  j.end_time = start == 0 ? 0 : start + 60;
  j.exit_code = exit_code;
  return j;
}

TEST(ArrayTasksTest, TheArrayJobIdOfATaskOrOfThePendingTasks) {
  EXPECT_EQ(ArrayJobId("452_5"), "452");
  EXPECT_EQ(ArrayJobId("452_[1-3,7%2]"), "452");
  EXPECT_EQ(ArrayJobId("452"), "452");
  EXPECT_EQ(ArrayJobId(""), "");
}

TEST(ArrayTasksTest, AnArrayThatHasStartedRunsWhileAnyTaskLives) {
  std::vector<JobInfo> rows = {Row("7", "RUNNING", "sky-0", 150), Row("452_[3-5%2]", "PENDING"),
                               Row("452_1", "RUNNING", "sky-1", 210),
                               Row("452_0", "COMPLETED", "sky-1", 200),
                               Row("452_2", "RUNNING", "sky-1", 205)};
  const std::vector<JobInfo> folded = FoldArrayTasks(rows);
  ASSERT_EQ(folded.size(), 2u);
  EXPECT_EQ(folded[0].key.job_id, "7");
  const JobInfo& a = folded[1];
  EXPECT_EQ(a.key.cluster, "alpha");
  EXPECT_EQ(a.key.job_id, "452");
  EXPECT_EQ(a.sky_id, "sky-1");
  EXPECT_EQ(a.phase, JobPhase::kRunning);
  EXPECT_EQ(a.start_time, 200);
  EXPECT_EQ((std::map<std::string, std::int64_t>{{"PENDING", 3}, {"RUNNING", 2}, {"COMPLETED", 1}}),
            a.array_tasks);
  // Which are still waiting (without the throttle): what a move of pending
  // tasks may take.
  EXPECT_EQ(a.pending_tasks, "3-5");
  // Its last task running: still running, though the others have ended.
  rows = {Row("452_0", "COMPLETED", "sky-1", 200), Row("452_1", "RUNNING", "sky-1", 210)};
  EXPECT_EQ(FoldArrayTasks(rows)[0].phase, JobPhase::kRunning);
  // Started, the rest pending: running (an array that started is never
  // moved whole).
  rows = {Row("452_[1-5]", "PENDING"), Row("452_0", "COMPLETED", "sky-1", 200)};
  EXPECT_EQ(FoldArrayTasks(rows)[0].phase, JobPhase::kRunning);
}

TEST(ArrayTasksTest, AnArrayThatHasNotStartedPends) {
  std::vector<JobInfo> rows = {Row("452_[0-9]", "PENDING")};
  JobInfo a = FoldArrayTasks(rows)[0];
  EXPECT_EQ(a.key.job_id, "452");
  EXPECT_EQ(a.phase, JobPhase::kPending);
  EXPECT_EQ(a.reason, "JobArrayTaskLimit");
  EXPECT_EQ(a.array_tasks.at("PENDING"), 10);
  EXPECT_EQ(a.pending_tasks, "0-9");
  // A single waiting task is listed with its index ("452_9").
  EXPECT_EQ(FoldArrayTasks({Row("452_9", "PENDING"), Row("452_3", "RUNNING", "sky-1", 200)})[0]
                .pending_tasks,
            "9");
  rows[0].phase = JobPhase::kHeld;
  EXPECT_EQ(FoldArrayTasks(rows)[0].phase, JobPhase::kHeld);
  // Held by the user (sbatch --hold): squeue says PENDING, the reason says
  // held; none of them waits to start, so none is moved. (Regression: a
  // spread array sent with --hold had its held tasks moved.)
  rows[0].phase = JobPhase::kPending;
  rows[0].reason = "JobHeldUser";
  EXPECT_EQ(FoldArrayTasks(rows)[0].pending_tasks, "");
}

TEST(ArrayTasksTest, AnEndedArrayEndsAsItsWorstTask) {
  std::vector<JobInfo> rows = {Row("452_0", "COMPLETED", "sky-1", 200),
                               Row("452_1", "FAILED", "sky-1", 200, 256),
                               Row("452_2", "COMPLETED", "sky-1", 300)};
  JobInfo a = FoldArrayTasks(rows)[0];
  EXPECT_EQ(a.phase, JobPhase::kFailed);
  EXPECT_EQ(a.state, "FAILED");
  EXPECT_EQ(a.exit_code, 256);
  EXPECT_EQ(a.end_time, 360);
  // The infrastructure's fault is named first.
  rows.push_back(Row("452_3", "NODE_FAIL", "sky-1", 200));
  EXPECT_EQ(FoldArrayTasks(rows)[0].phase, JobPhase::kNodeFail);
  rows = {Row("452_0", "COMPLETED", "sky-1", 200), Row("452_1", "COMPLETED", "sky-1", 210)};
  EXPECT_EQ(FoldArrayTasks(rows)[0].phase, JobPhase::kCompleted);
  // A state this version does not know is never taken for an end.
  rows.push_back(Row("452_2", "SOMETHING_NEW", "sky-1", 210));
  EXPECT_EQ(FoldArrayTasks(rows)[0].phase, JobPhase::kUnknown);
}

// Regression (issue 16, a CI run): once a move cancelled every task the
// array's own record still held pending, Slurm 22.05 lists that record by
// its bare id ("452 CANCELLED", as squeue printed it here) beside the
// tasks that ran. It is the array's, folded with them: the part ends as its
// tasks did, not as a second job "452" that was cancelled.
TEST(ArrayTasksTest, TheArraysOwnRecordListedByItsBareIdIsOneOfItsRows) {
  std::vector<JobInfo> rows = {
      Row("7", "RUNNING", "sky-0", 150), Row("452", "CANCELLED", "sky-1", 0),
      Row("452_0", "COMPLETED", "sky-1", 200), Row("452_1", "COMPLETED", "sky-1", 210)};
  std::vector<JobInfo> folded = FoldArrayTasks(rows);
  ASSERT_EQ(folded.size(), 2u);
  EXPECT_EQ(folded[0].key.job_id, "7");
  const JobInfo& a = folded[1];
  EXPECT_EQ(a.key.job_id, "452");
  EXPECT_EQ(a.phase, JobPhase::kCancelled);
  EXPECT_EQ((std::map<std::string, std::int64_t>{{"CANCELLED", 1}, {"COMPLETED", 2}}),
            a.array_tasks);
  EXPECT_EQ(a.start_time, 200);
  // Listed after its tasks, or while some still run: the same one job.
  rows = {Row("452_0", "RUNNING", "sky-1", 200), Row("452", "CANCELLED", "sky-1", 0)};
  folded = FoldArrayTasks(rows);
  ASSERT_EQ(folded.size(), 1u);
  EXPECT_EQ(folded[0].phase, JobPhase::kRunning);
  // Alone (the whole array cancelled while pending), or another sky job's
  // or a user's job with that id on another cluster: not folded.
  rows = {Row("452", "CANCELLED", "sky-1", 0)};
  EXPECT_EQ(FoldArrayTasks(rows)[0].array_tasks.size(), 0u);
  rows = {Row("452_0", "RUNNING", "sky-1", 200), Row("452", "RUNNING", "", 100),
          Row("452", "RUNNING", "sky-2", 100)};
  rows[2].key.cluster = "beta";
  folded = FoldArrayTasks(rows);
  ASSERT_EQ(folded.size(), 3u);
  EXPECT_EQ(folded[1].array_tasks.size(), 0u);
  EXPECT_EQ(folded[2].key.ToString(), "beta:452");
}

// Arrays on two clusters, or two arrays, are not one; a user's own array
// (no sky id) is listed as Slurm lists it.
TEST(ArrayTasksTest, OnlyOneSkyJobsArrayOnOneClusterIsFolded) {
  std::vector<JobInfo> rows = {Row("452_0", "RUNNING", "sky-1", 200),
                               Row("452_1", "RUNNING", "sky-1", 200),
                               Row("453_0", "RUNNING", "sky-2", 200),
                               Row("60_0", "RUNNING", "", 200), Row("60_1", "RUNNING", "", 200)};
  rows[1].key.cluster = "beta";
  const std::vector<JobInfo> folded = FoldArrayTasks(rows);
  ASSERT_EQ(folded.size(), 5u);
  EXPECT_EQ(folded[0].key.ToString(), "alpha:452");
  EXPECT_EQ(folded[1].key.ToString(), "beta:452");
  EXPECT_EQ(folded[2].key.ToString(), "alpha:453");
  EXPECT_EQ(folded[3].key.job_id, "60_0");
  EXPECT_EQ(folded[4].key.job_id, "60_1");
}

}  // namespace
}  // namespace skyslurm::backend
