// Which partitions of a cluster can run a job, and why the others cannot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "broker/cluster/description.h"

namespace skyslurm::translate {

// A job's needs, in the target cluster's own names.
struct Needs {
  std::optional<std::string> gpu_type;   // the cluster's spelling; nullopt: any GPU
  std::int64_t gpus_per_node = 0;
  std::int64_t gpus_total = 0;           // --gpus (per job)
  std::int64_t cpus_per_node = 1;
  std::int64_t memory_per_node_mb = 0;
  std::vector<std::string> features;     // every one is required
  std::int64_t nodes = 1;
  std::optional<std::int64_t> time_minutes;  // nullopt: none asked (the default applies)
  bool time_unlimited = false;
  std::optional<std::string> account;
  std::optional<std::string> qos;
};

struct PartitionFit {
  const cluster::Partition* partition = nullptr;
  std::int64_t eligible_nodes = 0;
  std::string problem;  // empty when the job fits
  bool fits() const { return problem.empty(); }
};

// Every partition of the cluster, in its order, with its verdict.
std::vector<PartitionFit> FitPartitions(const cluster::Description& target, const Needs& needs);

}  // namespace skyslurm::translate
