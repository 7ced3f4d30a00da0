// Moves: a job pending long enough is weighed against the other clusters;
// when one starts it clearly sooner (migrate_gain), the pending copy is
// cancelled and the job submitted there, under an intent, with back-pressure
// per cluster.
#include <fmt/format.h>

#include <algorithm>

#include "broker/backend/job_phase.h"
#include "broker/daemon/failover_policy.h"
#include "broker/daemon/fault_points.h"
#include "broker/daemon/job_manager.h"
#include "broker/place/planner.h"

namespace skyslurm::daemon {


void JobManager::WeighMove(store::SkyJob& job, const std::string& why) {
  const std::time_t now = Now();
  // Each weighing asks every cluster (sbatch --test-only uses up job ids
  // there): once per job every 5 s at most, and a bounded number per tick.
  if (auto it = last_weighed_.find(job.sky_id);
      it != last_weighed_.end() && now - it->second < std::max(5, policy_.poll_interval)) {
    return;
  }
  if (weighed_this_tick_ >= kWeighsPerTick) return;
  ++weighed_this_tick_;
  last_weighed_[job.sky_id] = now;
  auto input = JobInputFromText(job.input_json);
  if (!input.ok()) return;
  auto request = job::ParseRequest(input->ToRequestInput());
  // Its sky jobs answered its dependency before it was submitted: weighed
  // with what sbatch got, as its move is submitted.
  if (!request.ok() || !job::TakeSkyDependency(*request).ok()) return;
  std::vector<place::ClusterHandle> handles = ws_.handles;
  const std::vector<std::string> dead = DeadClusters();
  for (auto& h : handles) {
    if (std::find(dead.begin(), dead.end(), h.name) != dead.end()) h.unavailable = "not answering";
  }
  place::PlanOptions options;
  options.probe_timeout = options_.probe_timeout;
  options.estimate_timeout = options_.estimate_timeout;
  options.only = request->sky.clusters;
  if (request->sky.infra) return;  // pinned: it stays
  options.policy = PolicyNow(options.probe_timeout);
  // Its own cluster's estimate is its place in the queue there, and the jobs
  // behind it count in what a move to an elastic cluster is worth.
  options.pending_copy = place::PlanOptions::PendingCopy{job.cluster, job.native_id};
  place::Plan plan = place::MakePlan(*request, handles, ws_.catalog, ws_.home(), options);
  std::optional<std::time_t> here;
  const place::Candidate* best = nullptr;
  for (std::size_t i = 0; i < plan.candidates.size(); ++i) {
    const place::Candidate& c = plan.candidates[i];
    if (!c.start || !c.excluded.empty() || !c.unreachable.empty() || !c.infeasible.empty())
      continue;
    // The policy's word on an elastic cluster (overflow.after, spot, a
    // budget) holds for a move as for a placement, but its weighing of a
    // new job's wait and cost not for the cluster the job pends on: it was
    // placed there, and its place stands. Held back like a new job, it
    // counted as never starting there, and jobs pending on the cloud were
    // moved to fixed clusters that started them minutes later.
    const auto kind = plan.decision.verdicts[i].kind;
    const bool weighed_out =
        kind == place::Verdict::Kind::kHeldBack || kind == place::Verdict::Kind::kOverBudget;
    if (kind == place::Verdict::Kind::kExcluded || (weighed_out && c.cluster != job.cluster)) {
      continue;
    }
    if (c.cluster == job.cluster) {
      // Its own place in this cluster's queue (not before now).
      here = std::min(here.value_or(*c.start), *c.start);
    } else if (best == nullptr || *c.start < *best->start) {
      best = &c;
    }
  }
  if (best == nullptr) return;
  const std::time_t own = std::max(here.value_or(now + 365 * 86400), now);
  if (!MovePays(own, *best->start, policy_.migrate_gain)) return;
  {
    std::lock_guard lock(view_mu_);
    auto& recent = moves_into_[best->cluster];
    std::erase_if(recent, [&](std::time_t t) { return now - t >= 60; });
    if (static_cast<int>(recent.size()) >= policy_.moves_per_cluster) {
      const std::string deferred = fmt::format(
          "{} already took {} moves this minute (moves_per_cluster)", best->cluster, recent.size());
      if (job.reason != deferred) {  // once, not every weighing
        job.reason = deferred;
        (void)Record(job, EventKind::kMoveDeferred, deferred, best->cluster);
      }
      return;
    }
  }
  const std::string reason =
      fmt::format("{}; {}/{} starts it {} against {} on {}", why, best->cluster, best->partition,
                  place::FormatWait(*best->start, now), place::FormatWait(own, now), job.cluster);
  // Cancel the pending copy, only if it is still pending.
  const std::string old_cluster = job.cluster, old_id = job.native_id;
  auto intent = store_.BeginIntent({0, job.sky_id, "move", old_cluster, old_id, now});
  if (!intent.ok()) return;
  FaultPoint("move.intent");
  backend::Backend* b = BackendOf(old_cluster);
  if (b == nullptr || !b->Cancel(old_id, true, options_.queue_timeout).ok()) return;
  FaultPoint("move.cancelled");
  auto queue = b->Jobs(options_.queue_timeout);
  if (!queue.ok()) return;  // settled on a later tick from the intent
  for (const auto& j : *queue) {
    if (j.key.job_id == old_id && backend::IsLive(j.phase)) {
      // It started before the cancel reached it: it stays where it is.
      (void)store_.EndIntent(*intent);
      job.state = backend::IsWaiting(j.phase) ? "PENDING" : "RUNNING";
      (void)Record(job, EventKind::kMoveAbandoned,
                   "it started on " + old_cluster + " before the move", old_cluster, old_id);
      return;
    }
  }
  Status released = store_.Apply([&] {
    SKY_RETURN_IF_ERROR(
        DetachCopy(job, "CANCELLED", "MIGRATING", reason, EventKind::kMoveStarted, reason));
    return store_.EndIntent(*intent);
  });
  if (!released.ok()) return;
  FaultPoint("move.released");
  (void)PlaceAndSubmit(job, EventKind::kMoved, reason, dead, false, old_cluster);
}

}  // namespace skyslurm::daemon
