// The replay of a load on the real testbed (issue 18): each job of the
// load becomes a real Slurm job (`sleep` for its runtime, its GPUs, its
// --time) submitted at its time by the policy under test on alpha, beta
// and gamma (scripts/testbed/up --with-dbd), starting from clusters free of
// replay jobs; what each did is read from the clusters' queues as it
// happens (squeue every `look_s`) into the simulator's outcome form, so
// one report serves both.
//
// How each policy submits, as its user would:
//   home         sbatch into the first cluster that can run the job
//   slurm-m      sbatch -M alpha,beta,gamma (one slurmdbd): Slurm picks
//   failover     sbatch into the first able cluster in order; pending past
//                the timeout, `scancel --state=PENDING` and sbatch into the
//                next (the replayer is SkyPilot's controller)
//   round-robin  sbatch into the next able cluster in turn
//   skyslurm     sbatch --sky-any-cluster through the shim (skyslurmd with
//                its defaults, every time constant scaled)
// A job of a GPU type asks natives for it by feature (--constraint=h100,
// as the testbed's nodes are tagged) and skyslurm by type (--gpus-per-node=
// h100:N, which it respells per cluster).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/trace/policy_sim.h"
#include "bench/trace/trace_load.h"
#include "broker/util/status.h"

namespace skyslurm::trace {

struct TestbedOptions {
  // scripts/testbed/up's env file, read (SLURM_CONF_ALPHA...).
  std::map<std::string, std::string> testbed;
  std::string shim_bin;  // build/shim/bin: skyslurm's sbatch
  std::string home;      // the replay user's HOME: a copy of the testbed's
  SimOptions scaled;     // the time constants, scaled (ScaledOptions)
  // The replay stops this long (replay seconds) after the window's end;
  // jobs not started then are cancelled and left unstarted.
  double drain_s = 0;
  double look_s = 0.5;  // how often the queues are read
  std::string name_prefix = "trace-replay";
};

// One copy of a replay job in a cluster's queue.
struct QueuedCopy {
  std::string cluster, id, state;
  std::optional<double> start, end;  // epoch seconds; nullopt: none yet
};

// The format the replay reads queues with (`squeue -h -t all -o`).
inline constexpr const char* kReplayQueueFormat = "%i|%j|%T|%S|%e|%V";

// The replay jobs (named <prefix><index>) in one cluster's squeue output of
// that format, by job index: only those submitted at `since` (epoch) or
// later, as squeue shows ended jobs for MinJobAge (300 s) and a replay run
// minutes before has the same names. Times are squeue's local times.
std::map<std::size_t, std::vector<QueuedCopy>> ParseReplayQueue(const std::string& squeue_out,
                                                                const std::string& cluster,
                                                                const std::string& prefix,
                                                                double since);

Result<SimResult> ReplayOnTestbed(Policy policy, const Load& load,
                                  const std::vector<ModelCluster>& clusters,
                                  const TestbedOptions& options);

// Cancels every replay job (by name) on the clusters and waits until none
// pends or runs; an error when some are left after `timeout_s`.
Status ClearReplayJobs(const TestbedOptions& options, const std::vector<ModelCluster>& clusters,
                       double timeout_s = 60);

}  // namespace skyslurm::trace
