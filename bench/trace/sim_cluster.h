// A Slurm cluster as the trace simulator models it (issue 18): nodes of
// equal GPUs, shared by GPU count; pending jobs started in priority order
// (their submission order) with conservative backfill by time limits, as
// sched/backfill plans: every pending job is given the earliest start its
// limit allows behind the jobs before it, and a job whose start is now
// starts. The scheduler knows only limits; a job ends when its runtime is
// over. A start estimate is what the limits give (`sbatch --test-only`'s
// answer), so it is as wrong as the users' limits make it.
//
// Simplifications, stated: one partition; a scheduling pass at every event
// (a submission, an end, a cancel) rather than Slurm's intervals; GPUs
// alone are counted (no CPU or memory limits); a job's nodes are the ones
// with the fewest free GPUs that fit it (best fit); as Slurm's backfill
// tests at most bf_max_job_test jobs (500 by default) and reserves nothing
// beyond bf_window (a day by default), only the first `plan_depth` pending
// jobs are planned (and may start), and a job whose start falls beyond
// `plan_window_s` holds nothing: the rest wait their turn, unplanned.
//
// Cost: a pass plans each of those jobs over per-node step functions of
// the free GPUs in time, linear in the node's steps; a submission (the
// last in priority) and an estimate are one job over the last pass's plan;
// an end or a cancel is a pass.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace skyslurm::trace {

struct SimJob {
  std::string id;
  int nodes = 1;
  int gpus_per_node = 0;
  double limit_s = 60;   // what the scheduler plans with
  double runtime_s = 0;  // when it really ends (capped at its limit, as Slurm's TIMEOUT)
};

class SimCluster {
 public:
  SimCluster(std::string name, int nodes, int gpus_per_node, std::size_t plan_depth = 500,
             double plan_window_s = 86400);

  const std::string& name() const { return name_; }
  int total_gpus() const { return nodes_ * gpus_per_node_; }
  int busy_gpus() const;
  // Whether the job could ever run here (its nodes and GPUs fit).
  bool Fits(const SimJob& job) const;

  struct Event {
    enum class Kind { kStart, kEnd };
    double t = 0;
    std::string id;
    Kind kind = Kind::kStart;
  };
  // Queues the job at `now` (the clock must not go back) and schedules:
  // the events of this pass (it may start at once). A job that can never
  // fit is refused (false), as sbatch refuses it.
  bool Submit(const SimJob& job, double now, std::vector<Event>* events);
  // Removes a pending job (a move takes it away); false when it is not
  // pending here (it started, ended, or never was).
  bool CancelPending(const std::string& id, double now, std::vector<Event>* events);
  // Ends what ends up to `t` and starts what the scheduler then starts, in
  // time order.
  void AdvanceTo(double t, std::vector<Event>* events);
  // When a running job ends next (infinity: none runs).
  double NextEnd() const;

  // The start the limits give a job submitted at `now` behind the jobs
  // pending here that the last pass planned (nullopt: it never fits); the
  // cluster must have been advanced to `now`.
  std::optional<double> EstimateStart(const SimJob& job, double now) const;
  // A pending job's planned start (the last pass's), nullopt when not pending.
  std::optional<double> PlannedStart(const std::string& id) const;
  bool IsPending(const std::string& id) const;
  std::size_t pending() const { return pending_.size(); }

 private:
  struct Running {
    SimJob job;
    double start = 0;
    std::vector<int> on;  // node indices
  };
  // A node's free GPUs in time: from each step's `t` until the next's
  // (the last lasts for ever); the first step is the pass's now.
  struct Step {
    double t;
    int free;
  };
  using Profile = std::vector<std::vector<Step>>;  // per node

  Profile RunningProfile(double now) const;
  // The earliest start >= now of `job` in `profile`, and its nodes there.
  std::optional<std::pair<double, std::vector<int>>> Earliest(const Profile& profile,
                                                              const SimJob& job, double now) const;
  // Holds the job's GPUs on its nodes over [start, start + limit).
  static void Hold(Profile& profile, double start, const std::vector<int>& on, const SimJob& job);
  void Schedule(double now, std::vector<Event>* events);

  std::string name_;
  int nodes_;
  int gpus_per_node_;
  std::vector<int> free_;  // per node, now
  std::vector<Running> running_;
  std::vector<SimJob> pending_;  // in priority order
  std::vector<double> planned_;  // pending_'s planned starts
  std::size_t plan_depth_;
  double plan_window_s_;
  Profile plan_;  // the last pass's: running jobs and the planned ones held
  double plan_at_ = 0;
};

inline constexpr double kNever = std::numeric_limits<double>::infinity();

}  // namespace skyslurm::trace
