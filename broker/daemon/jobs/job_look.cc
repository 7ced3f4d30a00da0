// The look at every queue (JobManager::Tick): what a crash or a silent
// cluster left open settled first, every cluster's queue read, then each
// live job decided on by the failover policy (failover_policy.h) and acted
// on: its new state recorded, a move weighed, a job re-placed or
// restarted, an ended job finished.
#include <fmt/format.h>

#include <set>

#include "broker/cluster/job_phase.h"
#include "broker/daemon/jobs/fault_points.h"
#include "broker/daemon/jobs/job_manager.h"
#include "broker/daemon/jobs/lifecycle.h"
#include "broker/util/acting_user.h"

namespace skyslurm::daemon {
namespace {

// A part whose tasks moved away ended with every task it kept completed
// (its moved tasks counted as cancelled where they left).
bool PartCompleted(const store::SkyJob& part, const backend::JobInfo& copy) {
  auto mine = job::ParseArrayIndices(part.indices);
  if (!mine.ok() || !mine->has_value()) return false;
  auto done = copy.array_tasks.find("COMPLETED");
  return done != copy.array_tasks.end() &&
         done->second >= static_cast<std::int64_t>((*mine)->indices.size());
}

// Whether the job waits on a hold: as its cluster last showed it (the
// reason recorded from its queue) or, when no read since its submission has
// shown it, as it was submitted (--hold, -H, in the arguments or the
// script).
bool HeldAsLastKnown(ParsedJobs& parsed, const store::SkyJob& job, std::time_t queue_read) {
  if (job.reason.starts_with("JobHeld")) return true;
  if (queue_read > job.submitted) return false;  // seen since, and not held
  auto read = parsed.Of(job);
  return read.ok() && (*read)->request.hold;
}

}  // namespace

std::set<std::string> JobManager::Recover() { return l_->recovery.Settle(); }

void JobManager::Tick() {
  JobContext& ctx = l_->ctx;
  l_->mover.BeginLook();
  // Settle what a crash (or an unreachable cluster) left open first; a job
  // whose intent cannot be settled yet is left alone until it is.
  // A site's replica first renews and takes its leases: what it drives.
  ctx.RefreshLeases();
  const std::set<std::string> unsettled = Recover();
  // Read every cluster's queue at once; and keep each one's view for
  // placement warm meanwhile, so that a submission never waits for a probe.
  // A read may outlast this look (a controller busy with a burst of
  // submissions answers in seconds): it is collected by a later one, and
  // meanwhile the cluster keeps its last answer. Busy is not silent: only a
  // read that fails, or gives up after half of cluster_dead_after, is.
  const auto read_timeout = std::max<std::chrono::milliseconds>(
      ctx.options.queue_timeout, std::chrono::seconds(ctx.policy.cluster_dead_after) / 2);
  ctx.views.Read(ctx.ws, read_timeout, ctx.options.probe_timeout, ctx.options.queue_timeout,
                 ctx.Now());
  const std::time_t now = ctx.Now();
  l_->copies.SettleStale();
  auto live = ctx.store.List(true);
  if (!live.ok()) return;
  // A move asked for a job that ended since is forgotten, and so is what
  // was read of an ended job's input.
  std::set<std::string> live_ids;
  for (const store::SkyJob& j : *live) live_ids.insert(j.sky_id);
  l_->mover.ForgetAskedBut(live_ids);
  ctx.parsed.KeepOnly(live_ids);
  for (const store::SkyJob& job : *live) {
    if (ctx.Drives(job.sky_id)) LookAt(job, unsettled, now);
  }
}

void JobManager::LookAt(store::SkyJob job, const std::set<std::string>& unsettled,
                        std::time_t now) {
  JobContext& ctx = l_->ctx;
  if (unsettled.contains(job.sky_id)) return;
  std::unique_lock lock(ctx.LockFor(job.sky_id), std::try_to_lock);
  if (!lock.owns_lock()) return;  // a request is working on it
  // An intent opened since Recover() (a cancel in flight): settled first.
  if (ctx.store.HasOpenIntent(job.sky_id)) return;
  auto fresh = ctx.store.Get(job.sky_id);
  if (!fresh.ok()) return;
  job = *fresh;
  ActingFor as_owner(job.owner);  // a site's daemon: as the job's user
  if (store::IsFinalState(job.state)) return;
  // A spread array: its parts are jobs of their own; it ends with them.
  if (job.state == "SPREAD") {
    l_->arrays.Settle(job);
    return;
  }
  // Held back until the sky jobs its --dependency names answer it.
  if (Dependencies::Waits(job)) {
    l_->dependencies.Release(job);
    return;
  }
  // Between two copies (a move or restart that could not be placed yet,
  // or a crash in between): place it now.
  if (job.cluster.empty()) {
    const EventKind kind = job.state == "SUBMITTING"   ? EventKind::kSubmitted
                           : job.state == "RECOVERING" ? EventKind::kRestarted
                                                       : EventKind::kReplaced;
    auto placed = l_->placer.PlaceAndSubmit(job, kind, "resumed", ctx.DeadClusters(), false);
    if (!placed.ok()) {
      ctx.Log(fmt::format("{} not placed yet: {}", job.sky_id, placed.status().message()));
    }
    return;
  }
  ClusterViews::Seen seen = ctx.views.Look(job, now);
  if (l_->copies.Resolve(job, seen.live_copies)) return;  // looked at again next time
  Observation& o = seen.observation;
  if (!o.answered_now) o.held = HeldAsLastKnown(ctx.parsed, job, o.queue_read);
  Decision d = Decide(job, o, ctx.policy);
  const bool asked = TakeMoveAskedNow(job, seen, &d);
  Act(job, d, seen, asked, now);
  // A part of a spread array with tasks pending long enough: some may
  // start now on another cluster.
  if (!job.parent.empty() && o.copy && !o.copy->pending_tasks.empty() &&
      !store::IsFinalState(job.state) && now - job.submitted >= ctx.policy.migrate_after &&
      (d.action == Action::kNone || d.action == Action::kRecord)) {
    l_->task_moves.Weigh(job, *o.copy);
  }
}

bool JobManager::TakeMoveAskedNow(store::SkyJob& job, const ClusterViews::Seen& seen,
                                  Decision* d) {
  const Observation& o = seen.observation;
  if (!l_->mover.Room() || job.cluster.empty() || !l_->mover.TakeAsked(job.sky_id)) return false;
  const bool waiting = o.copy && backend::IsWaiting(o.copy->phase) &&
                       o.copy->array_tasks.empty() && !o.held &&
                       o.copy->phase != backend::JobPhase::kHeld &&
                       !o.copy->reason.starts_with("JobHeld");
  if (!waiting || job.moves >= l_->ctx.policy.max_moves) {
    (void)l_->ctx.Record(job, EventKind::kMoveAsked,
                         !waiting ? "asked to move now: it stays, it is no longer a pending job "
                                    "that can move"
                                  : fmt::format("asked to move now: it stays, it has moved {} "
                                                "times (max_moves)",
                                                job.moves));
    return false;
  }
  l_->mover.ForgetWeighing(job.sky_id);
  *d = {Action::kWeighMove, "PENDING", "asked to move now"};
  return true;
}

void JobManager::Act(store::SkyJob& job, const Decision& d, const ClusterViews::Seen& seen,
                     bool asked, std::time_t now) {
  JobContext& ctx = l_->ctx;
  const std::optional<backend::JobInfo>& copy = seen.observation.copy;
  const int moves_before = job.moves;
  switch (d.action) {
    case Action::kNone:
      break;
    case Action::kRecord:
      if (job.state != d.state || job.reason != d.reason) {
        const bool started = d.state == "RUNNING" && job.state != "RUNNING";
        job.state = d.state;
        job.reason = d.reason;
        if (started && copy) job.started = copy->start_time;
        (void)ctx.Record(job, started ? EventKind::kStarted : EventKind::kState,
                         d.state + ": " + d.reason, job.cluster, job.native_id);
        if (started) (void)ctx.store.SetCopyState(job.cluster, job.native_id, "RUNNING");
      }
      break;
    case Action::kWeighMove:
      if (job.state != "PENDING") {
        job.state = "PENDING";
        (void)ctx.Record(job, EventKind::kState, "PENDING");
      }
      l_->mover.Weigh(job, d.reason);
      // Moved, between two copies, or deferred (moves_per_cluster, its
      // own event): nothing more to say.
      if (asked && job.moves == moves_before && !job.cluster.empty() && job.state == "PENDING" &&
          job.reason.find("moves_per_cluster") == std::string::npos) {
        (void)ctx.Record(job, EventKind::kMoveAsked,
                         fmt::format("asked to move now: it stays on {}: no cluster starts it "
                                     "{} s sooner (migrate_gain), or the moves' limits hold it",
                                     job.cluster, ctx.policy.migrate_gain),
                         job.cluster, job.native_id);
      }
      break;
    case Action::kReplace: {
      Status st =
          ctx.DetachCopy(job, "STALE", d.state, d.reason, EventKind::kClusterLost,
                         d.reason + fmt::format("; the pending copy {}:{} is cancelled when {} "
                                                "answers again",
                                                job.cluster, job.native_id, job.cluster));
      if (st.ok()) {
        (void)l_->placer.PlaceAndSubmit(job, EventKind::kReplaced, d.reason, ctx.DeadClusters(),
                                        false);
      }
      break;
    }
    case Action::kRestart: {
      ++job.restarts;
      Status st =
          ctx.DetachCopy(job, "ENDED", d.state, d.reason, EventKind::kRestarting, d.reason);
      FaultPoint("restart.recorded");
      if (st.ok()) {
        (void)l_->placer.PlaceAndSubmit(job, EventKind::kRestarted, d.reason, ctx.DeadClusters(),
                                        false);
      }
      break;
    }
    case Action::kFinish:
      // --sky-sync-back: the files come back before the job is final, so
      // that a waiting sbatch finds them.
      l_->folders.FetchBack(job);
      job.state = d.state;
      job.reason = d.reason;
      if (job.moves > 0 && d.state == "CANCELLED" && copy && PartCompleted(job, *copy)) {
        // A part whose pending tasks moved away: they are listed there as
        // cancelled, and every task it kept completed.
        job.state = "COMPLETED";
        job.reason = "its tasks " + job.indices + " COMPLETED (others moved to another cluster)";
      }
      job.ended = now;
      if (copy) job.exit_code = copy->exit_code;
      (void)ctx.store.SetCopyState(job.cluster, job.native_id, "ENDED");
      (void)ctx.Record(job, EventKind::kEnded, job.reason, job.cluster, job.native_id);
      break;
  }
}

}  // namespace skyslurm::daemon
