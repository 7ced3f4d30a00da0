#include "broker/backend/slurm/slurm_translator.h"
#include "broker/backend/caching_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "broker/util/acting_user.h"
namespace skyslurm::backend {
namespace {

using ::testing::HasSubstr;

// Counts the calls that reach "the cluster".
class CountingBackend final : public Backend {
 public:
  const std::string& name() const override { return name_; }
  Capabilities capabilities() const override { return {"slurm", {}}; }
  translate::Translation Translate(const job::Request& request, const cluster::Description& target,
                                   const translate::TranslateContext& context) const override {
    return translate::TranslateForSlurm(request, target, context);
  }
  Result<cluster::Inventory> Probe(std::chrono::milliseconds) override {
    ++probes;
    if (probe_delay.count() > 0) std::this_thread::sleep_for(probe_delay);
    if (fail_probe) return UnavailableError("down");
    cluster::Inventory inv;
    inv.description.name = name_;
    cluster::Partition gpu;
    gpu.name = "gpu";
    gpu.is_default = true;
    inv.description.partitions = {gpu};
    inv.probed_at = probes;
    inv.ended = ended;
    inv.jobs = listed;
    return inv;
  }
  std::optional<cluster::QueuedJob> AsQueued(const SubmitSpec&, const JobKey& key) const override {
    if (!queued_view) return std::nullopt;
    cluster::QueuedJob q;
    q.job_id = key.job_id;
    q.phase = cluster::JobPhase::kPending;
    q.state = "PENDING";
    return q;
  }
  Result<StartEstimate> EstimateStart(const translate::TranslatedJob&,
                                      std::chrono::milliseconds) override {
    ++estimates;
    if (estimate_delay.count() > 0) std::this_thread::sleep_for(estimate_delay);
    if (fail_estimate) return UnavailableError("no answer");
    return StartEstimate{42, "p", "n1", "test"};
  }
  Result<JobKey> Submit(const SubmitSpec&, std::chrono::milliseconds) override {
    ++submissions;
    return JobKey{name_, "7"};
  }
  Result<std::vector<JobInfo>> Queue(std::chrono::milliseconds) override {
    return std::vector<JobInfo>{};
  }
  Status Cancel(const std::string&, bool, std::chrono::milliseconds) override { return OkStatus(); }
  Status Hold(const std::string& id, std::chrono::milliseconds) override {
    asked.push_back("hold " + id);
    return OkStatus();
  }
  Status Release(const std::string& id, std::chrono::milliseconds) override {
    asked.push_back("release " + id);
    return OkStatus();
  }
  Status SetArrayThrottle(const std::string& id, std::int64_t limit,
                          std::chrono::milliseconds) override {
    asked.push_back("throttle " + id + " " + std::to_string(limit));
    return OkStatus();
  }
  std::vector<std::string> asked;
  Result<std::string> Output(const std::string&, std::chrono::milliseconds) override {
    return std::string();
  }
  std::atomic<int> probes = 0, estimates = 0, submissions = 0;
  bool fail_probe = false;
  bool queued_view = false;
  std::vector<std::string> ended;          // ids the probe saw ended
  std::vector<cluster::QueuedJob> listed;  // the queue the probe sees
  std::chrono::milliseconds probe_delay{0};
  std::chrono::milliseconds estimate_delay{0};
  bool fail_estimate = false;

 private:
  std::string name_ = "beta";
};

struct FakeClock {
  std::chrono::steady_clock::time_point now{};
  std::function<std::chrono::steady_clock::time_point()> fn() {
    return [this] { return now; };
  }
};

TEST(CachingBackendTest, ProbesAreCachedForTheirTtl) {
  CountingBackend inner;
  FakeClock clock;
  CachingBackend cached(inner, {.probe_ttl = std::chrono::seconds(30)}, clock.fn());
  ASSERT_TRUE(cached.Probe(std::chrono::seconds(1)).ok());
  ASSERT_TRUE(cached.Probe(std::chrono::seconds(1)).ok());
  EXPECT_EQ(inner.probes, 1);
  clock.now += std::chrono::seconds(31);
  EXPECT_EQ(cached.Probe(std::chrono::seconds(1))->probed_at, 2);
  // Submitting changes the queue: the next probe asks again.
  (void)cached.Submit({}, std::chrono::seconds(1));
  (void)cached.Probe(std::chrono::seconds(1));
  EXPECT_EQ(inner.probes, 3);
}

// Regression: a job submitted and ended between two probes was added back
// to every later probe as pending (the probe no longer lists ended jobs among
// the queue), holding its GPUs in each estimate until it aged out.
TEST(CachingBackendTest, AJustSubmittedJobAProbeSawEndedIsNotAddedBack) {
  CountingBackend inner;
  inner.queued_view = true;
  FakeClock clock;
  CachingBackend cached(inner, {.probe_ttl = std::chrono::seconds(2)}, clock.fn());
  ASSERT_TRUE(cached.Submit({}, std::chrono::seconds(1)).ok());
  // A probe that missed it (begun before the submission): it is added.
  auto missed = cached.Probe(std::chrono::seconds(1));
  ASSERT_TRUE(missed.ok());
  ASSERT_EQ(missed->jobs.size(), 1u);
  EXPECT_EQ(missed->jobs[0].job_id, "7");
  // A probe that saw it ended: not added, and not by the probes after it.
  inner.ended = {"7"};
  clock.now += std::chrono::seconds(3);
  EXPECT_TRUE(cached.Probe(std::chrono::seconds(1))->jobs.empty());
  inner.ended.clear();
  clock.now += std::chrono::seconds(3);
  EXPECT_TRUE(cached.Probe(std::chrono::seconds(1))->jobs.empty());
}

// Regression (issue 16): an array just submitted is listed by its tasks
// ("7_3", "7_[4-9%2]"), never by its own id: it was added back as a whole
// pending array for a minute, so the cluster running it looked full and a
// spread array's pending tasks never moved there.
TEST(CachingBackendTest, AJustSubmittedArrayListedByItsTasksIsNotAddedAgain) {
  CountingBackend inner;
  inner.queued_view = true;
  FakeClock clock;
  CachingBackend cached(inner, {.probe_ttl = std::chrono::seconds(2)}, clock.fn());
  ASSERT_TRUE(cached.Submit({}, std::chrono::seconds(1)).ok());
  cluster::QueuedJob running, pending;
  running.job_id = "7_3";
  running.state = "RUNNING";
  running.phase = cluster::JobPhase::kRunning;
  pending.job_id = "7_[4-9%2]";
  pending.state = "PENDING";
  pending.phase = cluster::JobPhase::kPending;
  inner.listed = {running, pending};
  auto view = cached.Probe(std::chrono::seconds(1));
  ASSERT_TRUE(view.ok());
  ASSERT_EQ(view->jobs.size(), 2u);
  EXPECT_EQ(view->jobs[0].job_id, "7_3");
  EXPECT_EQ(view->jobs[1].job_id, "7_[4-9%2]");
  // One of its tasks seen ended: the array is known to the cluster.
  inner.listed.clear();
  inner.ended = {"7_3"};
  clock.now += std::chrono::seconds(3);
  EXPECT_TRUE(cached.Probe(std::chrono::seconds(1))->jobs.empty());
}

// Regression (issue 16): the cache did not pass a hold on, so a move of
// pending tasks cancelled them without holding them first (a task could
// start between the look and the cancel). Each change goes through and
// throws the cached view away.
TEST(CachingBackendTest, HoldReleaseAndTaskLimitReachTheCluster) {
  CountingBackend inner;
  FakeClock clock;
  CachingBackend cached(inner, {.probe_ttl = std::chrono::seconds(30)}, clock.fn());
  ASSERT_TRUE(cached.Probe(std::chrono::seconds(1)).ok());
  EXPECT_TRUE(cached.Hold("7_[4-9]", std::chrono::seconds(1)).ok());
  EXPECT_TRUE(cached.Release("7_[4-5]", std::chrono::seconds(1)).ok());
  EXPECT_TRUE(cached.SetArrayThrottle("7", 3, std::chrono::seconds(1)).ok());
  EXPECT_EQ(inner.asked,
            (std::vector<std::string>{"hold 7_[4-9]", "release 7_[4-5]", "throttle 7 3"}));
  ASSERT_TRUE(cached.Probe(std::chrono::seconds(1)).ok());
  EXPECT_EQ(inner.probes, 2);
}

// Issue 16: a burst from several shells is placed at once; each decision
// must see the jobs decided just before it whose sbatch has not returned,
// and the jobs sent without a partition in the default one (where the start
// estimates count the work ahead). Before, they were counted nowhere, and
// 30 one-GPU jobs went to alpha's 16 free GPUs in two seconds.
TEST(CachingBackendTest, AReservedJobIsInEveryViewUntilItsSubmissionReturns) {
  CountingBackend inner;
  inner.queued_view = true;
  FakeClock clock;
  CachingBackend cached(inner, {.probe_ttl = std::chrono::seconds(2)}, clock.fn());
  ASSERT_TRUE(cached.Probe(std::chrono::seconds(1)).ok());  // a view in the cache
  const std::uint64_t a = cached.Reserve({});
  const std::uint64_t b = cached.Reserve({});
  ASSERT_NE(a, 0u);
  ASSERT_NE(a, b);
  auto view = cached.Probe(std::chrono::seconds(1));
  ASSERT_EQ(view->jobs.size(), 2u);
  EXPECT_EQ(view->jobs[0].job_id, "placing-" + std::to_string(a));
  EXPECT_EQ(view->jobs[0].partition, "gpu");  // the default, where Slurm puts it
  // A fresh probe (which cannot list them) still shows them.
  clock.now += std::chrono::seconds(3);
  view = cached.Probe(std::chrono::seconds(1));
  EXPECT_EQ(inner.probes, 2);
  ASSERT_EQ(view->jobs.size(), 2u);
  // a's submission returned: the job itself instead of its reservation.
  ASSERT_TRUE(cached.Submit({}, std::chrono::seconds(1)).ok());
  cached.Unreserve(a);
  view = cached.Probe(std::chrono::seconds(1));
  ASSERT_EQ(view->jobs.size(), 2u);
  EXPECT_EQ(view->jobs[0].job_id, "placing-" + std::to_string(b));
  EXPECT_EQ(view->jobs[1].job_id, "7");
  EXPECT_EQ(view->jobs[1].partition, "gpu");
  cached.Unreserve(b);
  cached.Unreserve(b);  // once is enough
  clock.now += std::chrono::seconds(3);
  view = cached.Probe(std::chrono::seconds(1));
  ASSERT_EQ(view->jobs.size(), 1u);
  EXPECT_EQ(view->jobs[0].job_id, "7");
  // A backend that cannot show a job reserves nothing.
  inner.queued_view = false;
  EXPECT_EQ(cached.Reserve({}), 0u);
}

TEST(CachingBackendTest, CallersThatMissTogetherShareOneProbe) {
  CountingBackend inner;
  inner.probe_delay = std::chrono::milliseconds(200);
  CachingBackend cached(inner);
  std::vector<std::thread> callers;
  std::atomic<int> ok = 0;
  for (int i = 0; i < 8; ++i) {
    callers.emplace_back([&] { ok += cached.Probe(std::chrono::seconds(5)).ok() ? 1 : 0; });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(ok, 8);
  EXPECT_EQ(inner.probes, 1);
}

TEST(CachingBackendTest, TheSameJobsEstimateIsReusedForItsTtlOnly) {
  CountingBackend inner;
  FakeClock clock;
  CachingBackend cached(inner, {.estimate_ttl = std::chrono::seconds(2)}, clock.fn());
  translate::TranslatedJob job;
  job.args = {"--gres=gpu:h100:1"};
  job.script = "#!/bin/sh\n";
  EXPECT_EQ(cached.EstimateStart(job, std::chrono::seconds(5))->start, 42);
  EXPECT_EQ(cached.EstimateStart(job, std::chrono::seconds(5))->start, 42);
  EXPECT_EQ(inner.estimates, 1);
  translate::TranslatedJob other = job;
  other.args = {"--gres=gpu:h100:2"};
  (void)cached.EstimateStart(other, std::chrono::seconds(5));
  EXPECT_EQ(inner.estimates, 2);
  clock.now += std::chrono::seconds(2);
  (void)cached.EstimateStart(job, std::chrono::seconds(5));
  EXPECT_EQ(inner.estimates, 3);
  // Off by default: every call asks.
  CachingBackend plain(inner);
  (void)plain.EstimateStart(job, std::chrono::seconds(5));
  (void)plain.EstimateStart(job, std::chrono::seconds(5));
  EXPECT_EQ(inner.estimates, 5);
}

// Jobs that differ only by their names and files share an estimate (a
// workflow's many jobs), unless --dependency=singleton makes the name count;
// a site's users never share one (each is asked as its user).
TEST(CachingBackendTest, AnEstimateIsSharedAcrossNamesButNeverAcrossUsers) {
  CountingBackend inner;
  CachingBackend cached(inner, {.estimate_ttl = std::chrono::seconds(2)});
  translate::TranslatedJob job;
  job.script = "#!/bin/sh\n";
  job.args = {"-J", "step-1", "--output=/tmp/1.out", "--gres=gpu:h100:1"};
  (void)cached.EstimateStart(job, std::chrono::seconds(5));
  translate::TranslatedJob renamed = job;
  renamed.args = {"--job-name=step-2", "-o", "/tmp/2.out", "--gres=gpu:h100:1"};
  (void)cached.EstimateStart(renamed, std::chrono::seconds(5));
  EXPECT_EQ(inner.estimates, 1);
  translate::TranslatedJob singleton = job;
  singleton.args.push_back("--dependency=singleton");
  translate::TranslatedJob singleton2 = renamed;
  singleton2.args.push_back("--dependency=singleton");
  (void)cached.EstimateStart(singleton, std::chrono::seconds(5));
  (void)cached.EstimateStart(singleton2, std::chrono::seconds(5));
  EXPECT_EQ(inner.estimates, 3);
  {
    ActingFor alice("alice");
    (void)cached.EstimateStart(job, std::chrono::seconds(5));
    (void)cached.EstimateStart(renamed, std::chrono::seconds(5));
  }
  EXPECT_EQ(inner.estimates, 4);
  ActingFor bob("bob");
  (void)cached.EstimateStart(job, std::chrono::seconds(5));
  EXPECT_EQ(inner.estimates, 5);
}

// A burst of the same job from many shells: the callers that miss the cache
// while its estimate is asked wait for that answer (before, each asked, up
// to the per-second limit, and the rest slept for a slot). A failure is
// shared too, and not kept.
TEST(CachingBackendTest, CallersThatMissTogetherShareOneEstimate) {
  CountingBackend inner;
  inner.estimate_delay = std::chrono::milliseconds(200);
  CachingBackend cached(inner, {.estimate_ttl = std::chrono::seconds(2)});
  translate::TranslatedJob job;
  job.args = {"--gpus=1"};
  auto burst = [&] {
    std::vector<std::thread> callers;
    std::atomic<int> answered = 0, failed = 0;
    for (int i = 0; i < 8; ++i) {
      callers.emplace_back([&] {
        auto e = cached.EstimateStart(job, std::chrono::seconds(5));
        if (e.ok() && e->start == 42) ++answered;
        if (!e.ok() && e.status().message() == "no answer") ++failed;
      });
    }
    for (auto& t : callers) t.join();
    return std::make_pair(answered.load(), failed.load());
  };
  inner.fail_estimate = true;
  EXPECT_EQ(burst(), std::make_pair(0, 8));
  const int asked_failing = inner.estimates;
  EXPECT_LT(asked_failing, 8);
  inner.fail_estimate = false;
  EXPECT_EQ(burst(), std::make_pair(8, 0));
  EXPECT_LE(inner.estimates - asked_failing, 2);  // one, or two if a caller came late
  EXPECT_EQ(cached.EstimateStart(job, std::chrono::seconds(5))->start, 42);  // cached
  EXPECT_LE(inner.estimates - asked_failing, 2);
}

// What the planner takes on its own thread instead of starting one per
// question: exactly what Probe and EstimateStart would answer from memory,
// never a call that reaches the cluster.
TEST(CachingBackendTest, WhatIsHeldIsAnsweredAtOnceAndNothingElse) {
  CountingBackend inner;
  FakeClock clock;
  CachingBackend cached(
      inner, {.probe_ttl = std::chrono::seconds(30), .estimate_ttl = std::chrono::seconds(2)},
      clock.fn());
  EXPECT_FALSE(cached.ProbeAtOnce().has_value());
  ASSERT_TRUE(cached.Probe(std::chrono::seconds(1)).ok());
  auto held = cached.ProbeAtOnce();
  ASSERT_TRUE(held.has_value());
  ASSERT_TRUE(held->ok());
  EXPECT_EQ((*held)->probed_at, 1);
  EXPECT_EQ(inner.probes, 1);
  clock.now += std::chrono::seconds(31);
  EXPECT_FALSE(cached.ProbeAtOnce().has_value()) << "too old: only a probe can tell";
  cached.Invalidate();
  EXPECT_FALSE(cached.ProbeAtOnce().has_value());

  translate::TranslatedJob job;
  job.args = {"--gres=gpu:h100:1"};
  job.script = "#!/bin/sh\n";
  EXPECT_FALSE(cached.EstimateAtOnce(job).has_value());
  ASSERT_TRUE(cached.EstimateStart(job, std::chrono::seconds(5)).ok());
  ASSERT_TRUE(cached.EstimateAtOnce(job).has_value());
  EXPECT_EQ(cached.EstimateAtOnce(job)->start, 42);
  translate::TranslatedJob other = job;
  other.args = {"--gres=gpu:h100:2"};
  EXPECT_FALSE(cached.EstimateAtOnce(other).has_value());
  clock.now += std::chrono::seconds(2);
  EXPECT_FALSE(cached.EstimateAtOnce(job).has_value());
  EXPECT_EQ(inner.estimates, 1);
  EXPECT_EQ(inner.probes, 1);
}

TEST(CachingBackendTest, AnEstimateWithASubmissionIsCachedAndAFreshOneSparesTheAsking) {
  CountingBackend inner;
  FakeClock clock;
  CachingBackend cached(inner, {.estimate_ttl = std::chrono::seconds(2)}, clock.fn());
  translate::TranslatedJob job;
  job.args = {"--gres=gpu:h100:1"};
  SubmitSpec spec;
  spec.job = job;
  auto first = cached.EstimateThenSubmit(spec, std::chrono::seconds(5));
  EXPECT_EQ(first.estimate->start, 42);
  EXPECT_EQ(first.key->job_id, "7");
  EXPECT_EQ(inner.estimates, 1);
  // Fresh: only the submission goes out; the submitted job joins the view.
  auto second = cached.EstimateThenSubmit(spec, std::chrono::seconds(5));
  EXPECT_EQ(second.estimate->start, 42);
  EXPECT_EQ(inner.estimates, 1);
  EXPECT_EQ(inner.submissions, 2);
  EXPECT_EQ(cached.EstimateStart(job, std::chrono::seconds(5))->start, 42);
  EXPECT_EQ(inner.estimates, 1);
  clock.now += std::chrono::seconds(2);
  (void)cached.EstimateThenSubmit(spec, std::chrono::seconds(5));
  EXPECT_EQ(inner.estimates, 2);
}

TEST(CachingBackendTest, FailuresAreNotCached) {
  CountingBackend inner;
  inner.fail_probe = true;
  CachingBackend cached(inner);
  EXPECT_FALSE(cached.Probe(std::chrono::seconds(1)).ok());
  inner.fail_probe = false;
  EXPECT_TRUE(cached.Probe(std::chrono::seconds(1)).ok());
  EXPECT_EQ(inner.probes, 2);
}

TEST(CachingBackendTest, EstimatesAreRateLimitedWithinTheDeadline) {
  CountingBackend inner;
  CachingBackend cached(inner, {.estimates_per_second = 3});
  translate::TranslatedJob job;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(cached.EstimateStart(job, std::chrono::seconds(5)).ok());
  // The fourth waits for its turn (about a second) when the deadline allows...
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(cached.EstimateStart(job, std::chrono::seconds(5)).ok());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  // ...and is refused, saying why, when it does not.
  for (int i = 0; i < 2; ++i) (void)cached.EstimateStart(job, std::chrono::seconds(5));
  auto refused = cached.EstimateStart(job, std::chrono::milliseconds(10));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("at most 3 per second"));
  EXPECT_EQ(inner.estimates, 6);
}

}  // namespace
}  // namespace skyslurm::backend
