// Copy clean-up: a sky job has one live copy. Copies that a silent cluster
// kept, or that two moves left behind, are cancelled once their cluster
// answers, keeping the one that started first (or the current one).
#include "broker/daemon/jobs/copies.h"

#include <fmt/format.h>

#include <algorithm>

#include "broker/cluster/job_phase.h"
#include "broker/daemon/jobs/lifecycle.h"
#include "broker/util/acting_user.h"

namespace skyslurm::daemon {


bool Copies::Resolve(store::SkyJob& job, const std::vector<backend::JobInfo>& live) {
  // More than one live Slurm job carries this sky id (a cluster came back
  // after its pending job was placed again, or a crash between two steps):
  // the first to start is kept; if none runs, the current one.
  if (live.size() < 2) return false;
  const backend::JobInfo* keep = nullptr;
  for (const auto& j : live) {
    if (backend::IsWaiting(j.phase) || j.start_time == 0) continue;
    if (keep == nullptr || j.start_time < keep->start_time) keep = &j;
  }
  if (keep == nullptr) {
    for (const auto& j : live) {
      if (j.key.cluster == job.cluster && j.key.job_id == job.native_id) keep = &j;
    }
  }
  if (keep == nullptr) keep = &live.front();
  for (const auto& j : live) {
    if (&j == keep) continue;
    backend::Backend* b = BackendOf(j.key.cluster);
    if (b == nullptr) continue;
    const bool pending = backend::IsWaiting(j.phase);
    if (!b->Cancel(j.key.job_id, pending, options_.queue_timeout).ok()) continue;
    (void)store_.SetCopyState(j.key.cluster, j.key.job_id, "CANCELLED");
    (void)store_.AddEvent(
        {0, job.sky_id, Now(), std::string(EventName(EventKind::kDuplicateCancelled)),
         j.key.cluster, j.key.job_id,
         fmt::format("{} copy {} cancelled; {} kept ({})", pending ? "pending" : "running",
                     j.key.ToString(), keep->key.ToString(),
                     backend::IsWaiting(keep->phase) ? "the current copy" : "started first")});
  }
  if (job.cluster != keep->key.cluster || job.native_id != keep->key.job_id) {
    job.cluster = keep->key.cluster;
    job.native_id = keep->key.job_id;
    job.state = backend::IsWaiting(keep->phase) ? "PENDING" : "RUNNING";
    job.started = keep->start_time;
    (void)Record(job, EventKind::kKept, "this copy started first", job.cluster, job.native_id);
    return true;
  }
  return false;
}

void Copies::SettleStale() {
  auto stale = store_.CopiesInState("STALE");
  if (!stale.ok()) return;
  for (const auto& c : *stale) {
    // Another replica's job; an ended one is whoever takes it.
    if (!ctx_.Drives(c.sky_id) && !ctx_.TakeJob(c.sky_id)) continue;
    const auto listed = ctx_.views.Listed(c.cluster, c.native_id);
    if (!listed) continue;  // still silent
    const std::optional<backend::JobInfo>& seen = *listed;
    std::unique_lock lock(LockFor(c.sky_id), std::try_to_lock);
    if (!lock.owns_lock()) continue;
    auto job = store_.Get(c.sky_id);
    if (!job.ok()) continue;
    if (job->cluster == c.cluster && job->native_id == c.native_id) continue;  // kept as current
    ActingFor as_owner(job->owner);  // a site's daemon: as the job's user
    if (seen && backend::IsLive(seen->phase) && !store::IsFinalState(job->state)) {
      continue;  // the job lives on: ResolveCopies keeps the first to start
    }
    if (seen && backend::IsLive(seen->phase)) {
      // The job has ended elsewhere: this copy must not run it again.
      backend::Backend* b = BackendOf(c.cluster);
      if (b == nullptr || !b->Cancel(c.native_id, false, options_.queue_timeout).ok()) continue;
      (void)store_.SetCopyState(c.cluster, c.native_id, "CANCELLED");
      (void)store_.AddEvent({0, c.sky_id, Now(),
                             std::string(EventName(EventKind::kDuplicateCancelled)), c.cluster,
                             c.native_id,
                             fmt::format("stale copy {}:{} cancelled: {} has ended ({})", c.cluster,
                                         c.native_id, c.sky_id, job->state)});
    } else {
      (void)store_.SetCopyState(c.cluster, c.native_id, "ENDED");
    }
  }
}

std::vector<std::string> Copies::CancelAll(const store::SkyJob& job) {
  std::vector<std::string> unreachable;
  auto copies = store_.Copies(job.sky_id);
  if (!copies.ok()) return {"(state database)"};
  // One look at each cluster's queue, however many copies are there.
  std::map<std::string, Result<std::vector<backend::JobInfo>>> queues;
  for (const auto& c : *copies) {
    if (c.state == "CANCELLED" || c.state == "ENDED") continue;
    backend::Backend* b = BackendOf(c.cluster);
    auto it = queues.find(c.cluster);
    if (it == queues.end()) {
      it = queues
               .emplace(c.cluster, b == nullptr ? Result<std::vector<backend::JobInfo>>(
                                                      UnavailableError("no backend"))
                                                : b->Jobs(options_.queue_timeout))
               .first;
    }
    const auto& queue = it->second;
    if (!queue.ok()) {
      unreachable.push_back(c.cluster);
      continue;
    }
    const bool live = std::any_of(queue->begin(), queue->end(), [&](const backend::JobInfo& j) {
      return j.key.job_id == c.native_id && backend::IsLive(j.phase) &&
             j.phase != backend::JobPhase::kEnding;
    });
    // scancel refuses a job that has already ended: the queue decides.
    if (live && !b->Cancel(c.native_id, false, options_.submit_timeout).ok()) {
      unreachable.push_back(c.cluster);
      continue;
    }
    (void)store_.SetCopyState(c.cluster, c.native_id, live ? "CANCELLED" : "ENDED");
  }
  return unreachable;
}

}  // namespace skyslurm::daemon
