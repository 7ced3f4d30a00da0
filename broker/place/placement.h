// The placement decision, a pure function: every candidate (a cluster and a
// partition) with what is known of it in, the choice and one verdict per
// candidate out. The earliest estimated start wins; estimates within the tie
// tolerance (default 60 s) count as equal, and then the configured
// preference (higher wins), then the home cluster, then a cluster that
// costs nothing over an elastic one, then a Slurm cluster over an overflow
// one (Kubernetes), then the cheaper, then the cluster's own first choice of
// partition, then the earlier start.
//
// Elastic clusters (nodes booted on demand and billed, issue 15) are held to
// the site's policy first: a candidate over a budget is out, with the
// figures; spot partitions are allowed, avoided (used only when nothing else
// can run the job) or required (on-demand elastic partitions out); and an
// elastic cluster is held back while another starts the job within
// `overflow_after`, and, where the site or user values a wait
// (`wait_worth`, per GPU-hour of waiting), while the wait it saves over the
// earliest other start is worth less than its expected cost: a job that
// would boot a whole node for a short run waits for a fixed cluster, a job
// that joins a node others keep up (its GPUs' share) goes.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/place/estimate_calibration.h"

namespace skyslurm::place {

struct Candidate {
  std::string cluster;
  std::string partition;       // "" when the cluster is out before partitions matter
  bool home = false;
  // Kubernetes (or cloud): a Slurm cluster wins a tie against it.
  bool overflow = false;
  int preference = 0;
  // Among one cluster's partitions: 0 for the one translation chose (the
  // user's, else the default), then 1, 2...: a tie goes to the lower.
  int partition_rank = 0;
  // Why it is out, when it is (unreachable, excluded, cannot run the job,
  // no estimate): the first of these that is set decides.
  std::string excluded;        // by --sky-any-cluster=..., --sky-infra or site policy
  std::string unreachable;
  std::vector<std::string> infeasible;
  std::string no_estimate;
  std::optional<std::time_t> start;  // the estimate (on an elastic cluster: its boot included)
  // The model's estimate before calibration (Policy::estimate_scales): what
  // calibration learns from. Unset: the same as `start`.
  std::optional<std::time_t> model_start;
  std::string start_basis;
  // GPUs of the jobs the estimate found pending ahead of it (0: none, or
  // not laid out).
  std::int64_t pending_gpus_ahead = 0;
  // On the cluster the job pends on (a move's weighing): the GPUs of the
  // jobs queued there behind it, and how much later each of them starts
  // for its run (its GPUs x its run time over the partition's GPUs: in a
  // full queue the work ahead of them drains at that rate). A move away
  // spares them that wait; overflow.worth counts it.
  std::int64_t gpus_queued_behind = 0;
  double holds_those_behind_s = 0;
  // An elastic cluster: nodes powered up for the job and billed.
  bool elastic = false;
  // A spot partition: cheaper, its nodes taken back by the provider at will.
  bool spot = false;
  // What the job is expected to cost there for its time limit (cloud/cost.h,
  // elastic.h: on nodes booted for it, boot and idle tail included; beside
  // jobs on nodes others keep up, its GPUs' share); nullopt: nothing known
  // (free). `cost_basis` says which, for explain.
  std::optional<double> cost;
  std::string cost_basis;
  // What placing it there adds to the provider's bill, where that differs
  // from its cost: beside jobs that keep its nodes up past its time limit,
  // nothing; a little past them, the node time it adds (elastic.h
  // AddedNodeCost; further, its share stands: the jobs after it share
  // that time). On nodes it boots that the waiting work fills, more than
  // its share: their boot and idle tail whole, which booting them causes
  // (elastic.h BootedNodesAddedCost), less what the work that fills them
  // gains (GainOfWaitingWork, under overflow.worth), never below its
  // share. overflow.worth and a tie of estimates
  // weigh this; budgets and explain's cost count `cost`.
  std::optional<double> added_cost;
  // The GPUs the job asks for, all nodes together (what its wait is worth
  // is counted per GPU: Policy::wait_worth).
  std::int64_t gpus = 0;
  // A job array's tasks (PlanOptions::lay_out_array_tasks): when each
  // starts here, the first at `start`; empty when the estimate has no layout
  // of them (array_split.h then takes one task at a time from `start`).
  std::vector<std::time_t> task_starts;
};

// A budget the job's expected cost is held to: `limit` for the period,
// `spent` of it so far, `name` as a message says it ("your daily budget").
struct Budget {
  std::string name;
  double limit = 0;
  double spent = 0;
};

enum class SpotUse { kAllow, kAvoid, kRequire };

struct Policy {
  std::chrono::seconds tie_tolerance{60};
  // An elastic cluster only when no other cluster starts the job within this.
  std::chrono::seconds overflow_after{0};
  // What an hour of a job's wait is worth per GPU it asks for, in the
  // currency: an elastic cluster only when the wait it saves is worth its
  // expected cost. nullopt: no such test.
  std::optional<double> wait_worth;
  SpotUse spot = SpotUse::kAllow;
  std::vector<Budget> budgets;
  std::string currency = "$";
  // Start estimates take the jobs ahead to run the share of their time
  // limits the cluster's jobs lately ran (run_times: history), not their
  // whole limits (run_times: limits, Slurm's own way).
  bool run_times_from_history = false;
  // Per cluster: its estimated waits taken at this scale (estimates:
  // calibrated; estimate_calibration.h). None: as laid out.
  std::map<std::string, EstimateScale> estimate_scales;
};

struct Verdict {
  enum class Kind {
    kChosen,
    kTied,
    kLater,
    kInfeasible,
    kUnreachable,
    kExcluded,
    kNoEstimate,
    kHeldBack,    // elastic, waiting for overflow_after or an on-demand alternative
    kOverBudget,  // elastic, its expected cost over a budget
  };
  std::string cluster;
  std::string partition;
  Kind kind = Kind::kLater;
  std::optional<std::time_t> start;
  std::optional<double> cost;
  std::string reason;
};
std::string_view KindName(Verdict::Kind kind);

struct Decision {
  std::optional<std::size_t> chosen;  // index into candidates/verdicts
  std::vector<Verdict> verdicts;      // one per candidate, same order
  std::string summary;                // one line: the choice and why, or why none
  std::string currency = "$";         // the policy's, for the verdicts' costs
};

Decision Place(const std::vector<Candidate>& candidates, const Policy& policy, std::time_t now);

// "now", "in 45 s", "in 12 min", "in 3 h 5 min" relative to `now`.
std::string FormatWait(std::time_t start, std::time_t now);

// "$12.40", "$0.35": an amount in `currency`, to the cent.
std::string FormatCost(double amount, std::string_view currency);

}  // namespace skyslurm::place
