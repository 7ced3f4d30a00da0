// The policies a user could pick instead of skyslurm, and skyslurm's own,
// simulated over SimClusters in virtual time (issue 18): each decides where
// a job of the load goes, and (failover, skyslurm) when it goes elsewhere.
//
//   home         every job to the first cluster (the home) that can run it
//   slurm-m      `sbatch -M a,b,c`: at submission, the earliest start the
//                clusters' schedulers give by limits (ties: the first);
//                never moved
//   failover     SkyPilot's: the clusters in order; a job pending longer than
//                the timeout (120 s, scaled) is cancelled and submitted to the
//                next that can run it, round again after the last (a managed
//                job's retry)
//   round-robin  each job to the next cluster in turn that can run it
//   skyslurm     skyslurmd's own decisions, by its code (not a copy): the
//                placement (place::Place: the earliest estimated start,
//                ties within tie_tolerance to the home), then a look at the
//                queues every poll_interval where the failover policy
//                (daemon::Decide) weighs a job pending past migrate_after
//                and daemon::ChooseMove moves it where it starts
//                migrate_gain sooner, with skyslurmd's limits (max_moves,
//                moves_per_cluster, weighs per look). The estimates are
//                the clusters' by limits, as Slurm's --test-only gives them
//   oracle       clairvoyant: every runtime known (limits = runtimes), each
//                job to the cluster where it starts first; greedy, a
//                reference, not a proven lower bound
//
// A cluster can run a job when its nodes and GPUs fit and the job asks for
// its GPU type or none.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/trace/sim_cluster.h"
#include "bench/trace/trace_load.h"
#include "broker/config/settings.h"

namespace skyslurm::trace {

// kFederation, simulated only: Slurm federation's sibling jobs, a copy of
// each job queued on every cluster that can run it, the first to start
// keeping it (the others cancelled at once). Not one of the six:
// what placing jobs in several queues at once would give (scheduling.md).
enum class Policy { kHome, kSlurmM, kFailover, kRoundRobin, kSkyslurm, kOracle, kFederation };
std::string_view PolicyName(Policy policy);  // "home", "slurm-m", ...
// The policy of that name; nullopt for none.
std::optional<Policy> PolicyNamed(std::string_view name);

struct SimOptions {
  double failover_timeout_s = 120;  // scaled like every time
  double horizon_s = kNever;        // stop here: jobs not ended are cut
  // skyslurmd's settings (failover.*; its defaults), scaled like every time.
  config::FailoverSettings daemon;
  int tie_tolerance_s = 60;
  // Each cluster's backfill depth and window (SimCluster).
  std::size_t plan_depth = 500;
  double plan_window_s = 86400;
};

// The options for a load at `time_factor` (trace seconds per replay second):
// every time constant divided by it, skyslurmd's whole seconds of at least
// one (its clock's), moves_per_cluster (a minute's) multiplied by it.
// `daemon`: skyslurmd's settings in trace time (its defaults unless given).
SimOptions ScaledOptions(double time_factor, const config::FailoverSettings& daemon = {});

struct JobOutcome {
  std::string id;
  double submit = 0;
  double start = kNever;  // kNever: never started (by the horizon, or nowhere fits)
  double end = kNever;    // kNever: not ended by the horizon
  std::string cluster;    // where it started (or last pended)
  int moves = 0;
};

struct SimResult {
  std::vector<JobOutcome> jobs;  // the load's order
  // GPU-seconds each cluster was busy, up to the horizon (or the last end).
  std::map<std::string, double> busy_gpu_s;
  double end = 0;  // the last event (the makespan when nothing was cut)
  int moves = 0;
  int unplaced = 0;  // no cluster can run them
  // The placement decisions taken (at submission and each move weighed),
  // and the time they took together: the estimates asked of every cluster
  // and the decision.
  long decisions = 0;
  double decision_s = 0;
};

SimResult SimulatePolicy(Policy policy, const Load& load, const std::vector<ModelCluster>& clusters,
                         const SimOptions& options);

}  // namespace skyslurm::trace
