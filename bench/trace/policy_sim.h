// The policies a user could pick instead of skyslurm, simulated over
// SimClusters in virtual time (issue 18): each decides where a job of the
// load goes, and (the failover) when it goes elsewhere. skyslurm itself is
// driven through its own daemon code, not modelled here.
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
//   oracle       clairvoyant: every runtime known (limits = runtimes), each
//                job to the cluster where it starts first; greedy, a
//                reference, not a proven lower bound
//
// A cluster can run a job when its nodes and GPUs fit and the job asks for
// its GPU type or none.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench/trace/sim_cluster.h"
#include "bench/trace/trace_load.h"

namespace skyslurm::trace {

enum class Policy { kHome, kSlurmM, kFailover, kRoundRobin, kOracle };
std::string_view PolicyName(Policy policy);  // "home", "slurm-m", ...

struct SimOptions {
  double failover_timeout_s = 120;  // scaled like every time
  double horizon_s = kNever;        // stop here: jobs not ended are cut
};

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
};

SimResult SimulatePolicy(Policy policy, const Load& load, const std::vector<ModelCluster>& clusters,
                         const SimOptions& options);

}  // namespace skyslurm::trace
