#include "broker/daemon/jobs/failover_policy.h"

#include "broker/backend/slurm/slurm_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::daemon {
namespace {

using ::testing::HasSubstr;

constexpr std::time_t kNow = 1'000'000;

store::SkyJob Job(const std::string& state, std::time_t submitted = kNow - 10) {
  store::SkyJob j;
  j.sky_id = "sky-1";
  j.state = state;
  j.cluster = "alpha";
  j.native_id = "42";
  j.submitted = submitted;
  return j;
}

Observation Seen(std::optional<std::string> slurm_state, std::time_t answered = kNow) {
  Observation o;
  o.now = kNow;
  o.cluster_answered = answered;
  o.answered_now = answered == kNow;
  o.queue_read = kNow;
  if (slurm_state) {
    backend::JobInfo j;
    j.key = {"alpha", "42"};
    j.state = *slurm_state;
    j.phase = backend::SlurmPhaseOf(j.state);
    j.reason = "Resources";
    o.copy = j;
  }
  return o;
}

config::FailoverSettings Policy() {
  config::FailoverSettings p;
  p.migrate_after = 60;
  p.cluster_dead_after = 20;
  p.max_restarts = 2;
  p.max_moves = 3;
  return p;
}

TEST(FailoverPolicyTest, PendingIsRecordedThenWeighedAfterMigrateAfter) {
  Decision d = Decide(Job("SUBMITTING"), Seen("PENDING"), Policy());
  EXPECT_EQ(d.action, Action::kRecord);
  EXPECT_EQ(d.state, "PENDING");
  EXPECT_EQ(Decide(Job("PENDING"), Seen("PENDING"), Policy()).action, Action::kRecord);  // reason
  store::SkyJob young = Job("PENDING");
  young.reason = "Resources";
  EXPECT_EQ(Decide(young, Seen("PENDING"), Policy()).action, Action::kNone);
  store::SkyJob old = Job("PENDING", kNow - 61);
  d = Decide(old, Seen("PENDING"), Policy());
  EXPECT_EQ(d.action, Action::kWeighMove);
  EXPECT_THAT(d.reason, HasSubstr("pending 61 s on alpha"));
  old.moves = 3;  // max_moves used up
  old.reason = "Resources";
  EXPECT_EQ(Decide(old, Seen("PENDING"), Policy()).action, Action::kNone);
}

// Regression (issue 11): REQUEUE_HOLD counted as live in one place and as
// final in the policy, so a held managed job was recorded as ended (and
// restarted: then two copies could run). Held, it waits where it is.
TEST(FailoverPolicyTest, AHeldJobIsPendingAndNeverMoved) {
  store::SkyJob job = Job("PENDING", kNow - 3600);
  job.managed = true;
  for (const char* held : {"REQUEUE_HOLD", "SPECIAL_EXIT", "RESV_DEL_HOLD"}) {
    Decision d = Decide(job, Seen(held), Policy());
    EXPECT_NE(d.action, Action::kFinish) << held;
    EXPECT_NE(d.action, Action::kRestart) << held;
    EXPECT_NE(d.action, Action::kWeighMove) << held;
  }
  Observation user_hold = Seen("PENDING");
  user_hold.copy->reason = "JobHeldUser";
  job.reason = "JobHeldUser";
  EXPECT_EQ(Decide(job, user_hold, Policy()).action, Action::kNone);
}

// A state word this version does not know never ends a job.
TEST(FailoverPolicyTest, AnUnknownStateIsNoEnd) {
  store::SkyJob job = Job("RUNNING");
  job.managed = true;
  EXPECT_EQ(Decide(job, Seen("SOME_NEW_STATE"), Policy()).action, Action::kNone);
}

TEST(FailoverPolicyTest, ADeadClusterReplacesPendingJobsAndMarksRunningOnesUnknown) {
  EXPECT_EQ(Decide(Job("PENDING"), Seen(std::nullopt, kNow - 19), Policy()).action, Action::kNone);
  Decision d = Decide(Job("PENDING"), Seen(std::nullopt, kNow - 20), Policy());
  EXPECT_EQ(d.action, Action::kReplace);
  EXPECT_THAT(d.reason, HasSubstr("cluster alpha has not answered for 20 s"));
  d = Decide(Job("RUNNING"), Seen(std::nullopt, kNow - 30), Policy());
  EXPECT_EQ(d.action, Action::kRecord);
  EXPECT_EQ(d.state, "UNKNOWN");
  EXPECT_EQ(Decide(Job("UNKNOWN"), Seen(std::nullopt, kNow - 30), Policy()).action, Action::kNone);
  // Back: the running job is seen again.
  EXPECT_EQ(Decide(Job("UNKNOWN"), Seen("RUNNING"), Policy()).state, "RUNNING");
}

// Regression: in a burst (1,000 held jobs from 16 shells, on a slow CI
// machine) jobs were moved off a cluster that was busy, not dead: one read
// failed after a look of the daemon's own took long, and the silence was
// counted from the answer before that look. Now it counts from when the
// cluster was asked; and a held job stays where its hold was given.
TEST(FailoverPolicyTest, SilenceIsTheTimeAClusterWasAskedAndAHeldJobStays) {
  EXPECT_EQ(SilentSince(kNow - 60, 0), 0);  // no read failed
  // Last answer 40 s ago; the daemon asked again only 12 s ago (its look
  // was busy), and that read failed: silent 12 s, not 40.
  EXPECT_EQ(SilentSince(kNow - 40, kNow - 12), kNow - 12);
  EXPECT_EQ(SilentSince(kNow - 5, kNow - 12), kNow - 5);  // a submission answered since
  Observation silent = Seen(std::nullopt, kNow - 30);
  EXPECT_EQ(Decide(Job("PENDING"), silent, Policy()).action, Action::kReplace);
  silent.held = true;
  EXPECT_EQ(Decide(Job("PENDING"), silent, Policy()).action, Action::kNone);
  EXPECT_EQ(Decide(Job("SUBMITTING"), silent, Policy()).action, Action::kNone);
}

TEST(FailoverPolicyTest, ManagedJobsRestartOnInfrastructureFailuresOnly) {
  store::SkyJob job = Job("RUNNING");
  job.managed = true;
  for (const char* state : {"NODE_FAIL", "BOOT_FAIL", "PREEMPTED"}) {
    Decision d = Decide(job, Seen(state), Policy());
    EXPECT_EQ(d.action, Action::kRestart) << state;
    EXPECT_THAT(d.reason, HasSubstr("restart 1 of at most 2"));
  }
  Decision failed = Decide(job, Seen("FAILED"), Policy());
  EXPECT_EQ(failed.action, Action::kFinish);
  EXPECT_EQ(failed.state, "FAILED");
  job.retry_on_failure = 1;
  EXPECT_EQ(Decide(job, Seen("FAILED"), Policy()).action, Action::kRestart);
  EXPECT_EQ(Decide(job, Seen("CANCELLED"), Policy()).action, Action::kFinish);
  job.restarts = 2;
  Decision used_up = Decide(job, Seen("NODE_FAIL"), Policy());
  EXPECT_EQ(used_up.action, Action::kFinish);
  EXPECT_THAT(used_up.reason, HasSubstr("max_restarts (2) used up"));
  store::SkyJob plain = Job("RUNNING");
  EXPECT_EQ(Decide(plain, Seen("NODE_FAIL"), Policy()).action, Action::kFinish);
}

TEST(FailoverPolicyTest, AJobMissingFromAFreshQueueIsGoneButNotRightAfterSubmission) {
  EXPECT_EQ(Decide(Job("PENDING", kNow - 2), Seen(std::nullopt), Policy()).action, Action::kNone);
  Decision d = Decide(Job("RUNNING", kNow - 100), Seen(std::nullopt), Policy());
  EXPECT_EQ(d.action, Action::kFinish);
  EXPECT_EQ(d.state, "GONE");
}

// An array (its tasks folded into one row) is neither moved whole while it
// pends nor restarted whole when it ends: either would cancel or rerun
// tasks that are not the daemon's to repeat.
TEST(FailoverPolicyTest, AnArrayIsNeverMovedOrRestartedWhole) {
  Observation pending = Seen("PENDING");
  pending.copy->array_tasks = {{"PENDING", 6}};
  store::SkyJob old = Job("PENDING", kNow - 61);
  old.reason = "Resources";
  EXPECT_EQ(Decide(old, pending, Policy()).action, Action::kNone);
  Observation failed = Seen("NODE_FAIL");
  failed.copy->array_tasks = {{"COMPLETED", 5}, {"NODE_FAIL", 1}};
  store::SkyJob managed = Job("RUNNING");
  managed.managed = true;
  Decision d = Decide(managed, failed, Policy());
  EXPECT_EQ(d.action, Action::kFinish);
  EXPECT_EQ(d.state, "NODE_FAIL");
  EXPECT_THAT(d.reason,
              HasSubstr("5 COMPLETED, 1 NODE_FAIL of its tasks; an array is not restarted"));
  // The same end of a job that is not an array restarts it.
  EXPECT_EQ(Decide(managed, Seen("NODE_FAIL"), Policy()).action, Action::kRestart);
}

TEST(FailoverPolicyTest, MovePaysOnlyWithTheGain) {
  EXPECT_TRUE(MovePays(kNow + 600, kNow, 300));
  EXPECT_TRUE(MovePays(kNow + 300, kNow, 300));
  EXPECT_FALSE(MovePays(kNow + 299, kNow, 300));
}

place::Candidate At(const std::string& cluster, std::optional<std::time_t> start) {
  place::Candidate c;
  c.cluster = cluster;
  c.partition = "gpu";
  c.start = start;
  return c;
}

TEST(FailoverPolicyTest, AMoveGoesToTheSoonestOtherClusterOnlyWithTheGain) {
  std::vector<place::Candidate> cs = {At("alpha", kNow + 900), At("beta", kNow + 500),
                                      At("gamma", kNow + 100)};
  place::Decision d = place::Place(cs, place::Policy(), kNow);
  MoveChoice m = ChooseMove(cs, d, "alpha", kNow, 300);
  ASSERT_TRUE(m.to);
  EXPECT_EQ(cs[*m.to].cluster, "gamma");
  EXPECT_EQ(m.own, kNow + 900);
  // Not `gain` sooner: it stays.
  EXPECT_FALSE(ChooseMove(cs, d, "alpha", kNow, 801).to);
  // Its own place never counts before now; unknown, a year away.
  cs[0].start = kNow - 50;
  EXPECT_EQ(ChooseMove(cs, d, "alpha", kNow, 300).own, kNow);
  cs[0].start.reset();
  EXPECT_EQ(ChooseMove(cs, d, "alpha", kNow, 300).own, kNow + 365 * 86400);
}

TEST(FailoverPolicyTest, AMoveSkipsExcludedAndHeldBackClustersButNotItsOwn) {
  std::vector<place::Candidate> cs = {At("alpha", kNow + 900), At("beta", kNow),
                                      At("gamma", kNow + 100), At("delta", kNow)};
  cs[1].unreachable = "not answering";
  cs[3].infeasible = {"no H100"};
  place::Decision d = place::Place(cs, place::Policy(), kNow);
  d.verdicts[2].kind = place::Verdict::Kind::kHeldBack;  // gamma, elastic, held back
  EXPECT_FALSE(ChooseMove(cs, d, "alpha", kNow, 300).to);
  // Held back where it pends, it keeps its place there.
  d.verdicts[2].kind = place::Verdict::Kind::kLater;
  d.verdicts[0].kind = place::Verdict::Kind::kHeldBack;
  MoveChoice m = ChooseMove(cs, d, "alpha", kNow, 300);
  EXPECT_EQ(m.own, kNow + 900);
  ASSERT_TRUE(m.to);
  EXPECT_EQ(cs[*m.to].cluster, "gamma");
}

TEST(FailoverPolicyTest, MovesInTheLastMinuteForgetOlderOnes) {
  std::vector<std::time_t> recent = {kNow - 61, kNow - 60, kNow - 59, kNow};
  EXPECT_EQ(MovesInLastMinute(recent, kNow), 2);
  EXPECT_EQ(recent.size(), 2u);
}

}  // namespace
}  // namespace skyslurm::daemon
