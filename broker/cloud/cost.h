// What a job costs on an elastic cluster. A provider bills whole nodes from
// power-up to power-down; a site prices a cluster (or a partition) per
// GPU-hour, so a node's hour costs its GPUs times that price.
#pragma once

#include <chrono>

namespace skyslurm::cloud {

// A node-time's price: `node_seconds` of nodes with `gpus_per_node` GPUs at
// `price_per_gpu_hour` (a node without GPUs is priced as one GPU).
double NodeTimeCost(double node_seconds, int gpus_per_node, double price_per_gpu_hour);

struct ExpectedUse {
  int nodes = 1;
  int gpus_per_node = 0;             // the node's, not the job's: whole nodes are billed
  std::chrono::seconds run{};        // the job's time limit
  std::chrono::seconds boot{};       // 0 when its nodes are up already
  std::chrono::seconds idle_tail{};  // the cluster's SuspendTime after the job
};

// The most the job is expected to cost: its nodes booted, held for its
// whole time limit, then idle until powered down, nobody sharing them.
double ExpectedCost(const ExpectedUse& use, double price_per_gpu_hour);

}  // namespace skyslurm::cloud
