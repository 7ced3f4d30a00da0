#include "broker/job/job_update.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::job {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(JobUpdateTest, FieldsThatMeanTheSameEverywhereBecomeSbatchOptions) {
  const JobUpdate u =
      TranslateJobUpdate({"JobId=67108865", "TimeLimit=30", "name=renamed", "MinMemoryNode=2G",
                          "Requeue=0", "Features=", "NumNodes=2"});
  EXPECT_THAT(u.options, ElementsAre("--time=30", "--job-name=renamed", "--mem=2G", "--no-requeue",
                                     "--nodes=2"));
  EXPECT_THAT(u.names, ElementsAre("time", "job-name", "mem", "mem-per-cpu", "mem-per-gpu",
                                   "requeue", "no-requeue", "constraint", "nodes"));
  EXPECT_THAT(u.binding, IsEmpty());
}

TEST(JobUpdateTest, AClustersOwnFieldARelativeLimitOrAnUnknownOneBindsTheJob) {
  const JobUpdate u = TranslateJobUpdate({"jobid=67108865", "Partition=big", "QOS=high",
                                          "TimeLimit=+30", "Frobnicate=1", "Comment=keep"});
  EXPECT_THAT(u.binding, ElementsAre("Partition=big", "QOS=high", "TimeLimit=+30", "Frobnicate=1"));
  EXPECT_THAT(u.options, ElementsAre("--comment=keep"));
  EXPECT_TRUE(TranslateJobUpdate({"JobId=5"}).empty());
}

TEST(JobUpdateTest, AppliedTheUpdateReplacesTheSameOptionInEveryFormAndKeepsTheScript) {
  const JobUpdate u = TranslateJobUpdate({"TimeLimit=45", "MinMemoryCPU=1G", "Nice=10", "Name=y"});
  EXPECT_THAT(ApplyJobUpdate({"-t", "10", "-HJ", "x", "--mem=4G", "--nice=3", "--sky-any-cluster",
                              "job.sh", "-t", "5"},
                             u, ""),
              ElementsAre("--time=45", "--mem-per-cpu=1G", "--nice=10", "--job-name=y", "--hold",
                          "--sky-any-cluster", "job.sh", "-t", "5"));
}

TEST(JobUpdateTest, BoundTheJobIsPinnedToItsClusterInPlaceOfAnEarlierPin) {
  const JobUpdate u = TranslateJobUpdate({"Partition=big"});
  EXPECT_THAT(ApplyJobUpdate({"--sky-infra=alpha", "--wrap=hostname"}, u, "beta"),
              ElementsAre("--sky-infra=beta", "--wrap=hostname"));
  // A script named like an option stays after "--".
  EXPECT_THAT(ApplyJobUpdate({"-t", "5", "--", "-odd.sh"}, TranslateJobUpdate({"TimeLimit=6"}), ""),
              ElementsAre("--time=6", "--", "-odd.sh"));
}

}  // namespace
}  // namespace skyslurm::job
