#include "broker/backend/slurm/squeue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

namespace skyslurm::backend {
namespace {

using cluster::QueuedJob;
using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  // Appended, not `std::string(...) + "..." + name`: GCC 12 takes that for
  // an out-of-bounds memcpy (-Warray-bounds, a known false positive).
  std::string path = SKYSLURM_SOURCE_DIR;
  path += "/tests/data/clusters/";
  path += name;
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Captured from gamma's real squeue with SqueueActiveArgs(): a held array,
// a held 2-node job whose comment holds a field separator and a newline,
// and a running job.
TEST(SqueueActiveTest, ReadsRealOutput) {
  auto jobs = ParseSqueueActive(Fixture("gamma.squeue-active.txt"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 3u);
  const QueuedJob& array = (*jobs)[0];
  EXPECT_EQ(array.job_id, "452_[1-3,7%2]");
  EXPECT_EQ(array.tasks, 4);
  EXPECT_EQ(array.gpus_per_job, 2);
  EXPECT_EQ(array.time_limit_minutes, 90);
  EXPECT_EQ(array.comment, "");
  EXPECT_EQ(array.name, "skyfix");
  const QueuedJob& odd = (*jobs)[1];
  EXPECT_EQ(odd.job_id, "451");
  EXPECT_EQ(odd.state, "PENDING");
  EXPECT_EQ(odd.reason, "JobHeldUser");
  EXPECT_EQ(odd.gpu_type, "A100");
  EXPECT_EQ(odd.nodes, 2);
  EXPECT_EQ(odd.TotalGpus(), 16);
  EXPECT_EQ(odd.time_limit_minutes, 24 * 60);
  EXPECT_EQ(odd.comment, "x\x1fy\nz");
  EXPECT_EQ(odd.start_time, 0);
  const QueuedJob& running = (*jobs)[2];
  EXPECT_EQ(running.state, "RUNNING");
  EXPECT_EQ(running.partition, "batch");
  EXPECT_EQ(running.user, "root");
  EXPECT_EQ(running.nodelist, "gamma-n1");
  EXPECT_EQ(running.name, "skyrun");
  EXPECT_EQ(running.TotalGpus(), 2);
  EXPECT_EQ(running.submit_time, 1796139545);  // 2026-12-01T15:39:05Z
  EXPECT_EQ(running.end_time, running.start_time + 600);
  EXPECT_EQ(running.time_limit_minutes, 10);
  EXPECT_EQ(running.exit_code, 0);
}

// Captured with SqueueAllArgs() (skyslurmd's queue poll): ended jobs too,
// each with Slurm's wait status: `exit 3` is 768, a scancel SIGTERM 15.
TEST(SqueueAllTest, ReadsEndedJobsWithTheirWaitStatus) {
  auto jobs = ParseSqueueActive(Fixture("gamma.squeue-all.txt"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 14u);
  std::map<std::string, const QueuedJob*> by_id;
  for (const auto& j : *jobs) by_id[j.job_id] = &j;
  ASSERT_TRUE(by_id.contains("454"));
  EXPECT_EQ(by_id["454"]->state, "FAILED");
  EXPECT_EQ(by_id["454"]->reason, "NonZeroExitCode");
  EXPECT_EQ(by_id["454"]->exit_code, 3 << 8);
  EXPECT_EQ(by_id["446"]->state, "CANCELLED");
  EXPECT_EQ(by_id["446"]->exit_code, 15);
  EXPECT_EQ(by_id["443"]->user, "skyuser1");
  EXPECT_EQ(by_id["443"]->comment, "skyslurm:sky-20261201-153552-63ef07");
  EXPECT_EQ(by_id["443"]->name, "a100.sh");
  EXPECT_EQ(by_id["448"]->comment, "x\x1fy\nz");
  const auto args = SqueueAllArgs();
  EXPECT_EQ(args[1], "--states=all");
  EXPECT_EQ(args[2], SqueueActiveArgs()[2]);  // one form, one parser
}

// Captured from gamma: a held heterogeneous job of two components, the
// second (listed first) with the GPUs. The first is the job sbatch printed
// (7563); the second keeps its "N+K" id and its own resources.
TEST(SqueueActiveTest, AHeterogeneousJobsFirstComponentIsTheJob) {
  auto jobs = ParseSqueueActive(Fixture("gamma.squeue-hetjob.txt"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].job_id, "7563+1");
  EXPECT_EQ((*jobs)[0].het_offset, 1);
  EXPECT_EQ((*jobs)[0].TotalGpus(), 2);
  EXPECT_EQ((*jobs)[1].job_id, "7563");
  EXPECT_EQ((*jobs)[1].het_offset, 0);
  EXPECT_EQ((*jobs)[1].comment, "skyslurm:sky-20261207-170000-abcdef");
  std::string bad = "7563+x|PENDING||||||1|N/A|N/A|N/A|10:00||n|0|~";
  std::replace(bad.begin(), bad.end(), '|', '\x1f');
  std::replace(bad.begin(), bad.end(), '~', '\x1e');
  EXPECT_FALSE(ParseSqueueActive(bad).ok());
}

// Captured from epsilon (Slurm 24.11) with SqueueAllArgs(): the same
// fields, but exit_code is "exit:signal" (22.05 printed the wait status).
TEST(SqueueAllTest, ReadsSlurm2411sExitCodes) {
  auto jobs = ParseSqueueActive(Fixture("epsilon.squeue-all.txt"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 3u);
  std::map<std::string, const QueuedJob*> by_id;
  for (const auto& j : *jobs) by_id[j.job_id] = &j;
  EXPECT_EQ(by_id["4"]->state, "FAILED");
  EXPECT_EQ(by_id["4"]->exit_code, 3 << 8);  // `exit 3`, as 22.05 would say 768
  EXPECT_EQ(by_id["5"]->state, "PENDING");
  EXPECT_EQ(by_id["5"]->TotalGpus(), 16);
  EXPECT_EQ(by_id["3"]->state, "RUNNING");
  EXPECT_EQ(by_id["3"]->nodelist, "epsilon-n1");
}

TEST(SqueueExitCodeTest, BothReleasesSpellings) {
  EXPECT_EQ(ParseSqueueExitCode("768"), 768);
  EXPECT_EQ(ParseSqueueExitCode("3:0"), 768);
  EXPECT_EQ(ParseSqueueExitCode("0:15"), 15);
  EXPECT_EQ(ParseSqueueExitCode(""), 0);  // no exit yet
  EXPECT_EQ(ParseSqueueExitCode("x"), std::nullopt);
  EXPECT_EQ(ParseSqueueExitCode("1:"), std::nullopt);
  EXPECT_EQ(ParseSqueueExitCode("256:0"), std::nullopt);
  EXPECT_EQ(ParseSqueueExitCode("-1"), std::nullopt);
}

TEST(SqueueActiveTest, AsksForPendingAndRunningJobsWithSeparatedFields) {
  const auto args = SqueueActiveArgs();
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[1], "--states=PENDING,RUNNING");
  EXPECT_THAT(args[2], HasSubstr("--Format=JobArrayID:0\x1f,State:0\x1f,"));
  EXPECT_TRUE(args[2].ends_with("Comment:0\x1e"));
}

TEST(SqueueActiveTest, AnythingElseIsAnErrorQuotingIt) {
  EXPECT_TRUE(ParseSqueueActive("").ok());
  EXPECT_THAT(ParseSqueueActive("12\x1fPENDING\x1e\n").status().message(),
              HasSubstr("squeue: expected 16 fields, got '12|PENDING'"));
  EXPECT_THAT(ParseSqueueActive("12\x1fPENDING").status().message(),
              HasSubstr("a job's line is cut short: '12|PENDING'"));
  const std::string fields =
      "7\x1fRUNNING\x1fNone\x1f"
      "batch\x1fu\x1fN/A\x1fN/A\x1f";
  EXPECT_THAT(ParseSqueueActive(fields + "x\x1fN/A\x1fN/A\x1fN/A\x1f"
                                         "5:00\x1f\x1fname\x1f"
                                         "0\x1f(null)\x1e\n")
                  .status()
                  .message(),
              HasSubstr("job 7: unreadable NumNodes 'x'"));
  EXPECT_THAT(ParseSqueueActive(fields + "1\x1fyesterday\x1fN/A\x1fN/A\x1f"
                                         "5:00\x1f\x1fname\x1f"
                                         "0\x1f(null)\x1e\n")
                  .status()
                  .message(),
              HasSubstr("job 7: unreadable SubmitTime 'yesterday'"));
  auto unlimited = ParseSqueueActive(fields +
                                     "1\x1fN/A\x1fN/A\x1fN/A\x1fUNLIMITED\x1f\x1fname\x1f"
                                     "0\x1f(null)\x1e\n");
  ASSERT_TRUE(unlimited.ok()) << unlimited.status().message();
  EXPECT_THAT(ParseSqueueActive(fields + "1\x1fN/A\x1fN/A\x1fN/A\x1f"
                                         "5:00\x1f\x1fname\x1fzero\x1f(null)\x1e\n")
                  .status()
                  .message(),
              HasSubstr("job 7: unreadable exit_code 'zero'"));
  ASSERT_TRUE(unlimited.ok()) << unlimited.status().message();
  EXPECT_EQ((*unlimited)[0].time_limit_minutes, 0);
}

}  // namespace
}  // namespace skyslurm::backend
