// When a job would really start on a cluster. Slurm 22.05's `sbatch
// --test-only` simulates running jobs ending, but not the jobs pending ahead
// of this one, which will take the GPUs first. The model here (docs/placement.md):
// over the GPUs of the job's type on the nodes of its partition, lay out the
// running jobs until they end and the pending jobs ahead from the start the
// backfill scheduler gave each (squeue's start time) for their time limit;
// the job starts at the first moment from Slurm's own estimate on at which
// enough GPUs stay free for its whole time limit. It ignores how GPUs fall
// across nodes (Slurm's estimate, the floor, accounts for that).
#pragma once

#include <cstdint>
#include <ctime>
#include <set>
#include <string>
#include <vector>

#include "broker/catalog/accelerators.h"
#include "broker/cluster/inventory.h"

namespace skyslurm::place {

struct EstimateInput {
  std::time_t now = 0;
  std::time_t test_only_start = 0;  // Slurm's own answer
  std::set<std::string> partitions; // the job's partition and those sharing its nodes
  std::string gpu_type;             // the cluster's spelling; "" = any
  std::int64_t gpus = 0;            // in all; 0: not a GPU job (the floor stands)
  std::int64_t minutes = 60;        // the job's time limit
  std::int64_t capacity = 0;        // GPUs of that type in the partition, usable now
};

struct AdjustedEstimate {
  std::time_t start = 0;
  int pending_ahead = 0;            // pending jobs that count
  std::int64_t pending_gpus = 0;
  bool moved = false;               // later than Slurm's own estimate
};

AdjustedEstimate AccountForPendingWork(const EstimateInput& in,
                                       const std::vector<cluster::QueuedJob>& queue,
                                       const catalog::AcceleratorCatalog& catalog);

// The partitions whose nodes overlap `partition`'s (itself included).
std::set<std::string> OverlappingPartitions(const cluster::Description& d,
                                            const std::string& partition);
// GPUs of `type` ("" = all) on the nodes of `partition` that run jobs now or
// once booted (an elastic cluster's powered-down nodes).
std::int64_t GpuCapacity(const cluster::Description& d, const std::string& partition,
                         const std::string& type);

}  // namespace skyslurm::place
