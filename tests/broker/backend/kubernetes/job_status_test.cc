#include "broker/backend/kubernetes/job_status.h"

#include <gtest/gtest.h>

#include "tests/broker/kube/kube_fixtures.h"

namespace skyslurm::kube {
namespace {

using cluster::JobPhase;
using testing::Parse;
using testing::Pod;

Json::Value Job(const std::string& conditions = "[]") {
  return Parse(R"({"metadata":{"name":"skyslurm-7"},"spec":{"completions":2},"status":{)"
               R"("startTime":"2026-12-02T01:00:00Z","conditions":)" +
               conditions + "}}");
}

TEST(KubeJobStatusTest, PendingRunningAndComplete) {
  Json::Value waiting = Pod("p0", "", 8, "Pending");
  waiting["status"]["conditions"] = Parse(
      R"([{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}])");
  JobStatus s = StatusOf(Job(), {waiting});
  EXPECT_EQ(s.phase, JobPhase::kPending);
  EXPECT_EQ(s.state, "Pending");
  EXPECT_EQ(s.reason, "Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.");
  EXPECT_EQ(StatusOf(Job(), {Pod("p0", "n1", 8, "Running"), waiting}).phase, JobPhase::kRunning);
  EXPECT_EQ(
      StatusOf(Job(), {Pod("p0", "n1", 8, "Succeeded"), Pod("p1", "n1", 8, "Succeeded")}).phase,
      JobPhase::kEnding);
  JobStatus done = StatusOf(
      Job(R"([{"type":"Complete","status":"True","lastTransitionTime":"2026-12-02T01:05:00Z"}])"),
      {});
  EXPECT_EQ(done.phase, JobPhase::kCompleted);
  EXPECT_EQ(done.end, 1796173500);
}

TEST(KubeJobStatusTest, EachFinalKind) {
  const char* failed =
      R"([{"type":"Failed","status":"True","reason":"BackoffLimitExceeded","message":"Job has reached the specified backoff limit"}])";
  Json::Value crashed = Pod("p0", "n1", 8, "Failed");
  crashed["status"]["containerStatuses"] = Parse(R"([{"state":{"terminated":{"exitCode":3}}}])");
  JobStatus f = StatusOf(Job(failed), {crashed});
  EXPECT_EQ(f.phase, JobPhase::kFailed);
  EXPECT_EQ(f.exit_code, 3 << 8);
  EXPECT_EQ(f.state, "BackoffLimitExceeded");
  EXPECT_EQ(
      StatusOf(Job(R"([{"type":"Failed","status":"True","reason":"DeadlineExceeded"}])"), {}).phase,
      JobPhase::kTimeout);
  Json::Value evicted = Pod("p0", "n1", 8, "Failed");
  evicted["status"]["conditions"] = Parse(
      R"([{"type":"DisruptionTarget","status":"True","reason":"PreemptionByScheduler","message":"preempted"}])");
  JobStatus p = StatusOf(Job(failed), {evicted});
  EXPECT_EQ(p.phase, JobPhase::kPreempted);
  EXPECT_EQ(p.state, "PreemptionByScheduler");
  Json::Value lost = Pod("p0", "n1", 8, "Failed");
  lost["status"]["conditions"] =
      Parse(R"([{"type":"DisruptionTarget","status":"True","reason":"DeletionByTaintManager"}])");
  EXPECT_EQ(StatusOf(Job(failed), {lost}).phase, JobPhase::kNodeFail);
}

TEST(KubeJobStatusTest, AnImageThatCannotBePulledIsPendingAndSaysSince) {
  Json::Value pod = Pod("p0", "n1", 0, "Pending");
  pod["status"]["containerStatuses"] = Parse(
      R"([{"state":{"waiting":{"reason":"ImagePullBackOff","message":"Back-off pulling image \"nope:1\""}}}])");
  JobStatus s = StatusOf(Job(), {pod});
  EXPECT_EQ(s.phase, JobPhase::kPending);
  EXPECT_EQ(s.state, "ImagePullBackOff");
  EXPECT_EQ(s.reason, "Back-off pulling image \"nope:1\"");
  EXPECT_EQ(s.image_pull_stuck_since, 1796173200);
}

}  // namespace
}  // namespace skyslurm::kube
