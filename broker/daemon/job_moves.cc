// Moves: a job pending long enough is weighed against the other clusters;
// when one starts it clearly sooner (migrate_gain), the pending copy is
// cancelled and the job submitted there, under an intent, with back-pressure
// per cluster.
#include <fmt/format.h>

#include <algorithm>

#include "broker/cluster/job_phase.h"
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
  if (weighed_this_tick_ >= kMoveWeighsPerLook) return;
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
  const MoveChoice choice =
      ChooseMove(plan.candidates, plan.decision, job.cluster, now, policy_.migrate_gain);
  if (!choice.to) return;
  const place::Candidate* best = &plan.candidates[*choice.to];
  const std::time_t own = choice.own;
  {
    std::lock_guard lock(view_mu_);
    const int recent = MovesInLastMinute(moves_into_[best->cluster], now);
    if (recent >= policy_.moves_per_cluster) {
      const std::string deferred = fmt::format(
          "{} already took {} moves this minute (moves_per_cluster)", best->cluster, recent);
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
