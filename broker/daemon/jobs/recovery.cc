// Intent recovery: an intent written before a submit, move or cancel and
// still open after a crash (or while its cluster was silent) is settled by
// what the cluster's queue shows: the job is adopted, finished or left alone,
// never run twice.
#include <fmt/format.h>

#include <set>

#include "broker/daemon/jobs/recovery.h"

#include "broker/cluster/job_phase.h"
#include "broker/daemon/jobs/lifecycle.h"
#include "broker/util/acting_user.h"

namespace skyslurm::daemon {

Recovery::Recovery(Lifecycle& lifecycle) : Piece(lifecycle) {
  // What a crash left open; intents this daemon opens are settled by it.
  if (auto open = store_.OpenIntents(); open.ok()) {
    for (const auto& intent : *open) inherited_intents_.insert(intent.id);
  }
}

// Intents are settled on every look, not only after a crash: one left open by
// a cluster that did not answer in time (a busy controller during a burst) is
// settled on a later look by this same daemon, and its event must not claim a
// restart that never happened.
std::string Recovery::SettledWhen(const store::Intent& intent) const {
  if (inherited_intents_.contains(intent.id)) return "after a restart of skyslurmd";
  if (intent.cluster.empty()) return "on a later look";
  return "once " + intent.cluster + " answered";
}

void Recovery::SettleOne(const store::Intent& intent) {
  std::lock_guard lock(LockFor(intent.sky_id));
  auto job = store_.Get(intent.sky_id);
  if (!job.ok()) {
    // Only a job that is not there at all ends its intent; a database that
    // cannot answer leaves it for the next look.
    if (job.status().code() == StatusCode::kNotFound) (void)store_.EndIntent(intent.id);
    return;
  }
  ActingFor as_owner(job->owner);  // a site's daemon: as the job's user
  if (intent.action == "cancel") {
    // The user's cancel: every copy that may be live, then the job.
    if (!l_.copies.CancelAll(*job).empty()) return;  // a cluster does not answer: later
    (void)store_.Apply([&] {
      if (!store::IsFinalState(job->state)) {
        job->state = "CANCELLED";
        job->reason = "cancelled by the user";
        job->ended = Now();
        SKY_RETURN_IF_ERROR(
            Record(*job, EventKind::kCancelled, "skyslurm cancel, settled " + SettledWhen(intent)));
      }
      return store_.EndIntent(intent.id);
    });
    return;
  }
  if (intent.action == "move-tasks") {
    // A move of pending tasks: held and cancelled again if they still wait
    // (harmless; under a shared "%N" the part's limit set again first),
    // those then listed as cancelled become a new part, placed wherever
    // they start soonest.
    l_.task_moves.Finish(*job, intent, "", "a move of pending tasks settled " + SettledWhen(intent));
    return;
  }
  backend::Backend* b = BackendOf(intent.cluster);
  if (b == nullptr) return;  // a cluster no longer configured: kept for the record
  auto queue = b->Jobs(options_.queue_timeout);
  if (!queue.ok()) return;  // the cluster does not answer: later
  if (intent.action == "move") {
    SettleMove(intent, *job, *b, std::move(*queue));
  } else {
    SettleSubmit(intent, *job, *b, *queue);
  }
}

void Recovery::SettleMove(const store::Intent& intent, store::SkyJob& job, backend::Backend& b,
                          std::vector<backend::JobInfo> queue) {
  // A move cancels only a pending copy; where the copy is now decides.
  auto state_of_copy = [&](const std::vector<backend::JobInfo>& jobs) {
    for (const auto& j : jobs) {
      if (j.key.job_id == intent.native_id && IsLive(j.phase)) return j.phase;
    }
    return backend::JobPhase::kCancelled;
  };
  backend::JobPhase state = state_of_copy(queue);
  if (backend::IsWaiting(state)) {
    (void)b.Cancel(intent.native_id, true, options_.queue_timeout);
    auto again = b.Jobs(options_.queue_timeout);
    if (!again.ok()) return;
    state = state_of_copy(*again);
  }
  const bool current = job.cluster == intent.cluster && job.native_id == intent.native_id;
  (void)store_.Apply([&] {
    if (backend::IsLive(state)) {
      // It started before the move reached it: it stays where it runs.
      if (current && !store::IsFinalState(job.state)) {
        job.state = "RUNNING";
        SKY_RETURN_IF_ERROR(Record(job, EventKind::kMoveAbandoned,
                                   "it started on " + intent.cluster + " before the move",
                                   intent.cluster, intent.native_id));
      }
      return store_.EndIntent(intent.id);
    }
    SKY_RETURN_IF_ERROR(store_.SetCopyState(intent.cluster, intent.native_id, "CANCELLED"));
    if (current && !store::IsFinalState(job.state)) {
      SKY_RETURN_IF_ERROR(ctx_.DetachCopy(job, "CANCELLED", "MIGRATING", job.reason,
                                     EventKind::kRecovered,
                                     "the move's cancel was settled " + SettledWhen(intent)));
    }
    return store_.EndIntent(intent.id);
  });
}

void Recovery::SettleSubmit(const store::Intent& intent, store::SkyJob& job, backend::Backend& b,
                            const std::vector<backend::JobInfo>& queue) {
  // submit: did the job reach the cluster before the crash? Any job there
  // carrying the sky id that the store does not know yet is that one, live
  // or already ended (a short job): it is adopted, never submitted again.
  std::set<std::string> known;
  if (auto copies = store_.Copies(job.sky_id); copies.ok()) {
    for (const auto& c : *copies) known.insert(c.cluster + ":" + c.native_id);
  }
  const backend::JobInfo* found = nullptr;
  for (const auto& j : queue) {
    if (j.sky_id == intent.sky_id && !known.contains(j.key.ToString())) found = &j;
  }
  // Sent, its answer lost: its sbatch may still be on its way (a busy
  // login node or controller). Not there yet is not "never sent" until the
  // grace has passed; submitting again before would make two jobs.
  if (found == nullptr && intent.action == kUnansweredSubmit &&
      Now() - intent.created < options_.unanswered_grace.count()) {
    return;
  }
  (void)store_.Apply([&] {
    if (found != nullptr && store::IsFinalState(job.state)) {
      // Cancelled (or ended) meanwhile: the copy that did reach the cluster goes too.
      if (backend::IsLive(found->phase))
        (void)b.Cancel(found->key.job_id, false, options_.queue_timeout);
      SKY_RETURN_IF_ERROR(store_.AddCopy({job.sky_id, found->key.cluster, found->key.job_id,
                                          found->partition, "", "", "CANCELLED", Now()}));
    } else if (found != nullptr && job.cluster.empty()) {
      // The folder it was copied to: the same decision as at submission.
      const auto [workdir, source] = l_.folders.CopiedFolder(job, found->key.cluster);
      SKY_RETURN_IF_ERROR(
          store_.AddCopy({job.sky_id, found->key.cluster, found->key.job_id, found->partition, "",
                          "", found->state, Now(), workdir, source}));
      job.cluster = found->key.cluster;
      job.native_id = found->key.job_id;
      SKY_RETURN_IF_ERROR(ctx_.GiveGlobalId(job));
      job.state = "PENDING";  // the next look records what it really is
      job.submitted = found->submit_time != 0 ? found->submit_time : Now();
      SKY_RETURN_IF_ERROR(Record(job, EventKind::kRecovered,
                                 "found on the cluster " + SettledWhen(intent), found->key.cluster,
                                 found->key.job_id));
    }
    return store_.EndIntent(intent.id);
  });
}

std::set<std::string> Recovery::Settle() {
  std::set<std::string> unsettled;
  auto open = store_.OpenIntents();
  if (!open.ok()) return unsettled;
  for (const auto& intent : *open) {
    // A site's replica settles the intents of the jobs it holds only: the
    // others are their holders' (or, lapsed, whoever takes them over).
    // (An ended job is driven by no one: whoever takes it settles it.)
    if (ctx_.Drives(intent.sky_id) || ctx_.TakeJob(intent.sky_id)) SettleOne(intent);
  }
  auto left = store_.OpenIntents();
  if (left.ok()) {
    for (const auto& intent : *left) unsettled.insert(intent.sky_id);
  }
  return unsettled;
}

}  // namespace skyslurm::daemon
