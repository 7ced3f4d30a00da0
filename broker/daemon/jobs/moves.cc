// Moves: a job pending long enough is weighed against the other clusters;
// when one starts it clearly sooner (migrate_gain), the pending copy is
// cancelled and the job submitted there, under an intent, with back-pressure
// per cluster.
#include <fmt/format.h>

#include <algorithm>

#include "broker/daemon/jobs/moves.h"

#include "broker/cluster/job_phase.h"
#include "broker/daemon/jobs/failover_policy.h"
#include "broker/daemon/jobs/fault_points.h"
#include "broker/daemon/jobs/lifecycle.h"
#include "broker/place/planner.h"

namespace skyslurm::daemon {


bool Mover::TakeWeighing(const std::string& sky_id, std::time_t now) {
  // Once per job every 5 s at most, and a bounded number per look.
  if (auto it = last_weighed_.find(sky_id);
      it != last_weighed_.end() && now - it->second < std::max(5, policy_.poll_interval)) {
    return false;
  }
  if (!Room()) return false;
  ++weighed_this_look_;
  last_weighed_[sky_id] = now;
  return true;
}

void Mover::MovedInto(const std::string& cluster, std::time_t now) {
  std::lock_guard lock(mu_);
  moves_into_[cluster].push_back(now);
}

bool Mover::Crowded(const std::string& cluster, std::time_t now, int* recent) {
  std::lock_guard lock(mu_);
  const int n = MovesInLastMinute(moves_into_[cluster], now);
  if (recent != nullptr) *recent = n;
  return n >= policy_.moves_per_cluster;
}

void Mover::Weigh(store::SkyJob& job, const std::string& why) {
  const std::time_t now = Now();
  if (!TakeWeighing(job.sky_id, now)) return;
  auto parsed = ctx_.parsed.Of(job);
  if (!parsed.ok()) return;
  job::Request request_now = (*parsed)->request;
  auto* request = &request_now;
  // Its sky jobs answered its dependency before it was submitted: weighed
  // with what sbatch got, as its move is submitted.
  if (!job::TakeSkyDependency(*request).ok()) return;
  const std::vector<std::string> dead = DeadClusters();
  std::vector<place::ClusterHandle> handles = ctx_.HandlesWithout(dead, "not answering");
  place::PlanOptions options;
  options.probe_timeout = options_.probe_timeout;
  options.estimate_timeout = options_.estimate_timeout;
  options.only = request->sky.clusters;
  if (request->sky.infra) return;  // pinned: it stays
  options.policy = ctx_.PolicyNow(options.probe_timeout);
  // Its own cluster's estimate is its place in the queue there, and the jobs
  // behind it count in what a move to an elastic cluster is worth.
  options.pending_copy = place::PlanOptions::PendingCopy{job.cluster, job.native_id};
  place::Plan plan = place::MakePlan(*request, handles, ws_.catalog, ws_.home(), options);
  const MoveChoice choice =
      ChooseMove(plan.candidates, plan.decision, job.cluster, now, policy_.migrate_gain);
  if (!choice.to) return;
  const place::Candidate* best = &plan.candidates[*choice.to];
  const std::time_t own = choice.own;
  if (int recent = 0; Crowded(best->cluster, now, &recent)) {
    const std::string deferred = fmt::format(
        "{} already took {} moves this minute (moves_per_cluster)", best->cluster, recent);
    if (job.reason != deferred) {  // once, not every weighing
      job.reason = deferred;
      (void)Record(job, EventKind::kMoveDeferred, deferred, best->cluster);
    }
    return;
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
        ctx_.DetachCopy(job, "CANCELLED", "MIGRATING", reason, EventKind::kMoveStarted, reason));
    return store_.EndIntent(*intent);
  });
  if (!released.ok()) return;
  FaultPoint("move.released");
  (void)l_.placer.PlaceAndSubmit(job, EventKind::kMoved, reason, dead, false, old_cluster);
}

bool Mover::TakeAsked(const std::string& sky_id) {
  std::lock_guard lock(mu_);
  return asked_.erase(sky_id) > 0;
}

void Mover::ForgetAskedBut(const std::set<std::string>& live) {
  std::lock_guard lock(mu_);
  std::erase_if(asked_, [&](const std::string& id) { return !live.contains(id); });
}

Status Mover::Ask(const std::string& id) {
  SKY_ASSIGN_OR_RETURN(store::SkyJob job, l_.Find(id));
  auto refuse = [&](const std::string& why) {
    return FailedPreconditionError(fmt::format("{} cannot move: {}", job.sky_id, why));
  };
  if (store::IsFinalState(job.state)) return refuse("it has ended (" + job.state + ")");
  if (job.state == "SPREAD" || !job.indices.empty()) {
    return refuse("an array's pending tasks move with its spreading, not as a whole");
  }
  if (job.state != "PENDING" || job.cluster.empty()) {
    return refuse("only a job pending on a cluster moves (it is " + job.state + ")");
  }
  if (job.moves >= policy_.max_moves) {
    return refuse(
        fmt::format("it has moved {} times (max_moves {})", job.moves, policy_.max_moves));
  }
  if (auto parsed = ctx_.parsed.Of(job); parsed.ok()) {
    const job::Request& request = (*parsed)->request;
    if (request.sky.infra) return refuse("--sky-infra=" + *request.sky.infra + " pins it");
    if (request.array_indices) return refuse("an array is not moved whole");
  }
  if (job.reason.starts_with("JobHeld")) return refuse("it is held (" + job.reason + ")");
  std::lock_guard lock(mu_);
  asked_.insert(job.sky_id);
  return OkStatus();
}

}  // namespace skyslurm::daemon
