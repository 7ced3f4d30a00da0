// A window of a trace made into the load a replay submits (issue 18): the
// same jobs, the same shapes and times for every policy under test. The
// rules, each documented here and in docs/trace-replay.md:
//
// - Shape. A job of g GPUs asks for g on one node when some modelled node
//   has g (the largest node's size G or less); above that, ceil(g/G) nodes
//   of G each. A job larger than the largest cluster (its nodes times G) is
//   capped to that cluster whole, and counted. A trace's node count, where it
//   has one, is kept when the GPUs per node fit. Jobs of no GPU stay CPU jobs
//   of one node. Jobs that never ran (no runtime) are left out, counted.
// - Type. A job keeps the trace's GPU type when one of the clusters has it;
//   else (Philly, Alibaba record none) a seeded draw: half ask for no type,
//   the others for a type drawn in proportion to the modelled GPUs of each
//   type.
// - Time limit. Users overestimate: --time is the runtime times a factor
//   drawn (seeded) uniformly from [1, 4), rounded up to whole minutes, at
//   least a minute more than the runtime. A start estimate from limits is as
//   wrong as users make it.
// - Load. Arrival times are scaled (runtimes are not) so that the GPU time
//   offered within the window is `load` of the modelled GPUs over it: a
//   trace's own cluster was far larger than the ones modelled. A job offers
//   its GPUs from its arrival until it ends or the window does: a job of a
//   month offers the window what it can use of it, not its month (else a
//   few such jobs would stretch the arrivals until nothing waits). The
//   scale stays within [1/10, 100]; a load out of that reach is reported
//   as the one reached.
// - Time factor. Then every time (arrivals, runtimes, limits) is divided by
//   `time_factor`: a replay of 24 trace hours at 60 runs in 24 minutes.
//
// Every draw comes from one generator seeded with `seed`, in job order, the
// same for every policy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/trace/trace_file.h"

namespace skyslurm::trace {

struct ModelCluster {
  std::string name;
  int nodes = 0;
  int gpus_per_node = 0;
  std::string gpu_type;  // one type per cluster, as the testbed's
};

struct LoadOptions {
  double window_s = 24 * 3600;  // the window's length in trace time
  double load = 0.9;            // the GPU load offered, of the modelled capacity
  double time_factor = 1;       // trace seconds per replay second
  std::uint64_t seed = 1;
};

struct ReplayJob {
  std::string id;       // the trace's
  double submit_s = 0;  // replay time from the window's start
  double runtime_s = 0;
  int time_limit_min = 1;  // the modelled --time (replay minutes, at least 1)
  int nodes = 1;
  int gpus_per_node = 0;
  std::string gpu_type;  // "" for any type
  bool capped = false;   // larger than any cluster: cut to the largest
  int gpus() const { return nodes * gpus_per_node; }
};

struct Load {
  std::vector<ReplayJob> jobs;  // in submission order
  int capped = 0;
  int never_ran = 0;         // left out: the trace has no runtime for them
  double arrival_scale = 1;  // trace arrival times were multiplied by it
  double offered_load = 0;   // the window's own load on the modelled GPUs, before scaling
  double replay_load = 0;    // the load after scaling (`load`, unless out of reach)
  double window_s = 0;       // the window's length in replay seconds
};

// `clusters` must hold at least one cluster with GPUs.
Load ShapeLoad(const std::vector<TraceJob>& window, const std::vector<ModelCluster>& clusters,
               const LoadOptions& options);

// The rules every policy places by, simulated and on the testbed alike. A
// cluster can run a job when its nodes and GPUs per node fit and the job
// asks for its GPU type or none.
bool CanRun(const ReplayJob& job, const ModelCluster& cluster);
// The clusters that can run it, in order.
std::vector<std::size_t> AbleClusters(const ReplayJob& job,
                                      const std::vector<ModelCluster>& clusters);
// The first cluster that can run it from `from` on, round the order
// (`from` itself last); nullopt when none can. Round-robin's turn is
// NextAble(job, clusters, turn); the failover's next, NextAble(job,
// clusters, where + 1), which is `where` again when no other can.
std::optional<std::size_t> NextAble(const ReplayJob& job, const std::vector<ModelCluster>& clusters,
                                    std::size_t from);

}  // namespace skyslurm::trace
