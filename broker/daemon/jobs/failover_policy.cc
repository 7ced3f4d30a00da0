#include "broker/daemon/jobs/failover_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "broker/cluster/job_phase.h"

namespace skyslurm::daemon {

namespace {

// "3 COMPLETED, 1 FAILED": an array's tasks by phase.
std::string TaskCounts(const std::map<std::string, std::int64_t>& tasks) {
  std::string out;
  for (const auto& [phase, n] : tasks) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, phase);
  }
  return out;
}

}  // namespace

bool MovePays(std::time_t here, std::time_t there, int gain) { return there + gain <= here; }

MoveChoice ChooseMove(const std::vector<place::Candidate>& candidates,
                      const place::Decision& decision, const std::string& own_cluster,
                      std::time_t now, int gain) {
  std::optional<std::time_t> here;
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const place::Candidate& c = candidates[i];
    if (!c.start || !c.excluded.empty() || !c.unreachable.empty() || !c.infeasible.empty())
      continue;
    // The policy's word on an elastic cluster (overflow.after, spot, a
    // budget) holds for a move as for a placement, but its weighing of a
    // new job's wait and cost not for the cluster the job pends on: it was
    // placed there, and its place stands. Held back like a new job, it
    // counted as never starting there, and jobs pending on the cloud were
    // moved to fixed clusters that started them minutes later.
    const auto kind = i < decision.verdicts.size() ? decision.verdicts[i].kind
                                                   : place::Verdict::Kind::kLater;
    const bool weighed_out =
        kind == place::Verdict::Kind::kHeldBack || kind == place::Verdict::Kind::kOverBudget;
    if (kind == place::Verdict::Kind::kExcluded || (weighed_out && c.cluster != own_cluster)) {
      continue;
    }
    if (c.cluster == own_cluster) {
      // Its own place in this cluster's queue (its partitions: the soonest).
      here = std::min(here.value_or(*c.start), *c.start);
    } else if (!best || *c.start < *candidates[*best].start) {
      best = i;
    }
  }
  MoveChoice choice;
  choice.own = std::max(here.value_or(now + 365 * 86400), now);
  if (best && MovePays(choice.own, *candidates[*best].start, gain)) choice.to = best;
  return choice;
}

int MovesInLastMinute(std::vector<std::time_t>& recent, std::time_t now) {
  std::erase_if(recent, [&](std::time_t t) { return now - t >= 60; });
  return static_cast<int>(recent.size());
}

Decision Decide(const store::SkyJob& job, const Observation& seen,
                const config::FailoverSettings& policy) {
  if (store::IsFinalState(job.state) || job.cluster.empty()) return {};
  if (!seen.answered_now) {
    const std::time_t since = seen.cluster_answered;
    const long silent = since == 0 ? 0 : static_cast<long>(seen.now - since);
    if (since == 0 || silent < policy.cluster_dead_after) return {};
    const std::string why =
        fmt::format("cluster {} has not answered for {} s (cluster_dead_after {} s)", job.cluster,
                    silent, policy.cluster_dead_after);
    if (job.state == "PENDING" || job.state == "SUBMITTING") {
      // A held job starts nowhere before whoever holds it releases it, and
      // they release it by its id there (scontrol release): it stays.
      if (seen.held) return {};
      return {Action::kReplace, "MIGRATING", why};
    }
    if (job.state != "UNKNOWN") {
      return {Action::kRecord, "UNKNOWN", why + "; whether the job still runs there is unknown"};
    }
    return {};
  }
  if (!seen.copy) {
    // Not in a queue read well after the copy was submitted: it ended and
    // left the queue between two looks (MinJobAge), or was purged.
    if (seen.queue_read < job.submitted + 5) return {};
    return {Action::kFinish, "GONE",
            fmt::format("{}:{} left the queue unseen; its result is unknown", job.cluster,
                        job.native_id)};
  }
  const backend::JobInfo& c = *seen.copy;
  const std::string slurm_reason = c.reason == "None" || c.reason.empty() ? "waiting" : c.reason;
  const backend::JobPhase phase = c.phase;
  // Held (REQUEUE_HOLD, a user's or admin's hold): it waits for whoever
  // holds it, here; moving it would start it elsewhere against their will.
  const bool held = phase == backend::JobPhase::kHeld || c.reason.starts_with("JobHeld");
  if (backend::IsWaiting(phase)) {
    if (job.state != "PENDING") return {Action::kRecord, "PENDING", slurm_reason};
    if (held) {
      if (job.reason != slurm_reason) return {Action::kRecord, "PENDING", slurm_reason};
      return {};
    }
    const long pending = static_cast<long>(seen.now - job.submitted);
    // An array is not moved whole: scancel --state=PENDING of it would
    // cancel its pending tasks and leave one that started meanwhile, and the
    // tasks cancelled would never run. Its pending tasks move with spreading.
    const bool array = !c.array_tasks.empty();
    if (pending >= policy.migrate_after && job.moves < policy.max_moves && !array) {
      return {Action::kWeighMove, "PENDING",
              fmt::format("pending {} s on {} (migrate_after {} s)", pending, job.cluster,
                          policy.migrate_after)};
    }
    if (job.reason != slurm_reason) return {Action::kRecord, "PENDING", slurm_reason};
    return {};
  }
  // A state this version does not know is never taken for an end (the job
  // would be recorded ended, or run twice): the next look may tell more.
  if (phase == backend::JobPhase::kUnknown) return {};
  if (backend::HasNodes(phase)) {
    if (job.state != "RUNNING") {
      return {Action::kRecord, "RUNNING",
              fmt::format("running on {}:{}", job.cluster, job.native_id)};
    }
    return {};
  }
  // A final state.
  const std::string where = fmt::format("{}:{}", job.cluster, job.native_id);
  // An array ended: restarted whole, its tasks that completed would run
  // twice.
  if (!c.array_tasks.empty()) {
    return {Action::kFinish, std::string(backend::PhaseName(phase)),
            fmt::format("{} on {} ({} of its tasks; an array is not restarted)", c.state, where,
                        TaskCounts(c.array_tasks))};
  }
  if (job.managed && backend::IsInfrastructureFailure(phase)) {
    if (job.restarts < policy.max_restarts) {
      return {Action::kRestart, "RECOVERING",
              fmt::format("{} on {}: restart {} of at most {}", c.state, where, job.restarts + 1,
                          policy.max_restarts)};
    }
    return {
        Action::kFinish, std::string(backend::PhaseName(phase)),
        fmt::format("{} on {}; max_restarts ({}) used up", c.state, where, policy.max_restarts)};
  }
  if (job.managed && phase != backend::JobPhase::kCompleted &&
      phase != backend::JobPhase::kCancelled && job.restarts < job.retry_on_failure) {
    return {
        Action::kRestart, "RECOVERING",
        fmt::format("{} on {} (exit status {}): retry {} of {} (--sky-retry-on-failure)", c.state,
                    where, (c.exit_code >> 8) & 0xff, job.restarts + 1, job.retry_on_failure)};
  }
  return {Action::kFinish, std::string(backend::PhaseName(phase)),
          fmt::format("{} on {}", c.state, where)};
}

std::time_t SilentSince(std::time_t heard, std::time_t failing_since) {
  return failing_since == 0 ? 0 : std::max(heard, failing_since);
}

}  // namespace skyslurm::daemon
