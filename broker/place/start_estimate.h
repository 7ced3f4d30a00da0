// When a job would really start on a cluster. Neither of Slurm 22.05's
// answers can be taken as it is. Its backfill plan, where squeue's start times
// for pending jobs come from, keeps a whole node for every pending job it
// plans (its map of the future is per node, not per GPU): on the testbed's
// three 8-GPU nodes it planned 24 pending 1-GPU jobs 3 every 5 minutes, and
// `sbatch --test-only` then said a new 1-GPU job would start in 45 minutes,
// when the GPUs allow 10. Yet with a pending 2-node job ahead, --test-only
// answered as if it were not there. So the model here (docs/placement.md)
// lays the work out itself, node by node and GPU by GPU: the running jobs on
// their nodes until they end (by their time limits), then the pending jobs
// ahead in the plan's order, each at the first moment enough nodes have its
// GPUs free for its whole time limit (backfill with GPUs as the only
// resource), then the job. Optionally the others' time limits are taken at
// the share of them the cluster's jobs lately ran (cluster/limit_use.h); the
// job's own is always whole, as Slurm fits it. When that finds its GPUs free
// now, Slurm's answer stands (something else holds the job: CPUs, memory, a
// reservation); otherwise the model's start does, earlier or later than
// Slurm's.
#pragma once

#include <cstdint>
#include <ctime>
#include <set>
#include <string>
#include <vector>

#include "broker/catalog/accelerators.h"
#include "broker/cluster/inventory.h"

namespace skyslurm::place {

// A node of the job's partition that runs jobs now or once booted, with its
// GPUs of the job's type.
struct NodeGpus {
  std::string name;
  std::int64_t gpus = 0;
};

struct EstimateInput {
  std::time_t now = 0;
  std::time_t test_only_start = 0;  // Slurm's own answer
  std::set<std::string> partitions; // the job's partition and those sharing its nodes
  std::string gpu_type;             // the cluster's spelling; "" = any
  std::int64_t gpus = 0;            // in all; 0: not a GPU job (the floor stands)
  std::int64_t minutes = 60;        // the job's time limit
  std::int64_t capacity = 0;        // GPUs of that type in the partition, usable now
  // The partition's nodes (GpuNodes); none known: `capacity` as one pool,
  // the job's GPUs all from it.
  std::vector<NodeGpus> nodes;
  std::int64_t job_nodes = 1;  // the nodes the job asks for
  // How much of their time limits the cluster's jobs run (the jobs lately
  // ended there): a running job ends, and a pending one holds its GPUs, for
  // that share of its limit. nullptr: for their whole limits, as Slurm plans.
  const cluster::LimitUse* limit_use = nullptr;
  // The job's own pending copy on this cluster (a move's weighing), its job
  // id; "" for a new job. Its start is then its own place in the queue, and
  // the jobs behind it are counted (AdjustedEstimate::gpus_behind).
  std::string own_job_id;
  // A job array's tasks, each asking for `gpus` (a new job only): the
  // starts of this many are laid out, one after another (task_starts).
  std::int64_t tasks = 1;
};

struct AdjustedEstimate {
  std::time_t start = 0;
  int pending_ahead = 0;            // pending jobs that count
  std::int64_t pending_gpus = 0;
  bool moved = false;               // later than Slurm's own estimate
  bool earlier = false;             // sooner than Slurm's own estimate
  // With EstimateInput::own_job_id found pending: the jobs laid out after it
  // (Slurm's order), their GPUs in all, and how long its own run holds the
  // GPUs (its time limit, or the share of it its user's jobs lately ran).
  bool own_found = false;
  int pending_behind = 0;
  std::int64_t gpus_behind = 0;
  std::int64_t own_run_s = 0;
  // With EstimateInput::tasks above 1: when each of that many tasks starts
  // by the layout, each laid out after the ones before it (behind the same
  // work as the first); the first kMostLaidOutTasks laid out, the rest at
  // the rate the partition's GPUs run them. Empty when the layout has no
  // say (no GPUs asked, none in the partition, more than it ever has free).
  std::vector<std::time_t> task_starts;
};

// How many of an array's tasks the layout places one by one; further ones
// follow at the partition's rate.
inline constexpr std::int64_t kMostLaidOutTasks = 2000;

AdjustedEstimate AccountForPendingWork(const EstimateInput& in,
                                       const std::vector<cluster::QueuedJob>& queue,
                                       const catalog::AcceleratorCatalog& catalog);

// The partitions whose nodes overlap `partition`'s (itself included).
std::set<std::string> OverlappingPartitions(const cluster::Description& d,
                                            const std::string& partition);
// The nodes of `partition` that run jobs now or once booted (an elastic
// cluster's powered-down nodes), with their GPUs of `type` ("" = all); nodes
// without such GPUs are left out.
std::vector<NodeGpus> GpuNodes(const cluster::Description& d, const std::string& partition,
                               const std::string& type);
// Their GPUs in all.
std::int64_t GpuCapacity(const cluster::Description& d, const std::string& partition,
                         const std::string& type);

}  // namespace skyslurm::place
