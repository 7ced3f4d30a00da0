#include "broker/backend/slurm/array_throttle.h"

#include <gtest/gtest.h>

#include <string>

namespace skyslurm::backend {
namespace {

// `scontrol -o show job 85` on the testbed (fields trimmed) after tasks
// 2-5 of `--array=0-5%2` were held and cancelled and
// `scontrol update JobId=85 ArrayTaskThrottle=1` exited 1 with
// "85_4-5: Job has already finished": the running tasks have the limit.
constexpr char kAfterMove[] =
    "JobId=85 ArrayJobId=85 ArrayTaskId=4294967294 ArrayTaskThrottle=1 JobName=sktest "
    "JobState=CANCELLED Reason=JobHeldAdmin Dependency=(null)\n"
    "JobId=89 ArrayJobId=85 ArrayTaskId=5 ArrayTaskThrottle=1 JobName=sktest "
    "JobState=CANCELLED Reason=JobHeldAdmin Dependency=(null)\n"
    "JobId=87 ArrayJobId=85 ArrayTaskId=1 ArrayTaskThrottle=1 JobName=sktest "
    "JobState=RUNNING Reason=None Dependency=(null)\n"
    "JobId=86 ArrayJobId=85 ArrayTaskId=0 ArrayTaskThrottle=1 JobName=sktest "
    "JobState=RUNNING Reason=None Dependency=(null)\n";

TEST(LiveRecordsHaveThrottleTest, EveryLiveRecordWithTheLimitIsSuccess) {
  EXPECT_TRUE(LiveRecordsHaveThrottle(kAfterMove, 1));
}

TEST(LiveRecordsHaveThrottleTest, ALiveRecordWithAnotherLimitIsNot) {
  EXPECT_FALSE(LiveRecordsHaveThrottle(kAfterMove, 2));
  // One running task the update missed.
  const std::string one_left = std::string(kAfterMove) +
                               "JobId=90 ArrayJobId=85 ArrayTaskId=6 ArrayTaskThrottle=4 "
                               "JobName=sktest JobState=RUNNING Reason=None\n";
  EXPECT_FALSE(LiveRecordsHaveThrottle(one_left, 1));
  // A pending record without the field at all is not limited.
  EXPECT_FALSE(LiveRecordsHaveThrottle("JobId=7 ArrayJobId=7 JobState=PENDING Reason=None\n", 1));
}

TEST(LiveRecordsHaveThrottleTest, EndedRecordsAloneNeedNoLimit) {
  EXPECT_TRUE(LiveRecordsHaveThrottle(
      "JobId=85 ArrayJobId=85 ArrayTaskThrottle=2 JobState=COMPLETED Reason=None\n", 1));
}

TEST(LiveRecordsHaveThrottleTest, NoRecordIsNoAnswer) {
  EXPECT_FALSE(LiveRecordsHaveThrottle("", 1));
  EXPECT_FALSE(LiveRecordsHaveThrottle("slurm_load_jobs error: Invalid job id specified\n", 1));
}

TEST(LiveRecordsHaveThrottleTest, AKeyIsMatchedAsAWholeWord) {
  // "MyArrayTaskThrottle=1" is not the field; the record has none.
  EXPECT_FALSE(LiveRecordsHaveThrottle(
      "JobId=9 Comment=MyArrayTaskThrottle=1 JobState=RUNNING Reason=None\n", 1));
  // A state whose word this version does not know counts as live.
  EXPECT_FALSE(LiveRecordsHaveThrottle(
      "JobId=9 ArrayTaskThrottle=3 JobState=SOMETHING_NEW Reason=None\n", 1));
}

}  // namespace
}  // namespace skyslurm::backend
