// Which partitions of a cluster can run a job, and why the others cannot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "broker/cluster/description.h"

namespace skyslurm::translate {

// A job's needs, in the target cluster's own names, each with the option
// that asks for it as the user wrote it ("--time=2:00:00"), which reasons
// name.
struct Needs {
  std::optional<std::string> gpu_type;  // the cluster's spelling; nullopt: any GPU
  std::int64_t gpus_per_node = 0;
  std::int64_t gpus_total = 0;  // --gpus (per job)
  std::int64_t cpus_per_node = 1;
  std::int64_t memory_per_node_mb = 0;
  std::vector<std::string> features;  // every one is required
  std::int64_t nodes = 1;
  std::optional<std::int64_t> time_minutes;  // nullopt: none asked (the default applies)
  bool time_unlimited = false;
  std::optional<std::string> account;
  std::optional<std::string> qos;
  // The options behind each need ("" when none was written: a default).
  std::string gpus_option, cpus_option, memory_option, nodes_option, time_option, features_option;
};

struct PartitionFit {
  const cluster::Partition* partition = nullptr;
  std::int64_t eligible_nodes = 0;
  // Every reason the partition cannot run the job (state, time, account,
  // QoS, GPUs, CPUs, memory, features, node count), each naming the option
  // and the limit; empty when the job fits.
  std::vector<std::string> problems;
  // The problems in one line (", " between them).
  std::string problem;
  bool fits() const { return problems.empty(); }
};

// Every partition of the cluster, in its order, with its verdict: all of a
// partition's reasons at once, so that fixing one shows no next one.
std::vector<PartitionFit> FitPartitions(const cluster::Description& target, const Needs& needs);

}  // namespace skyslurm::translate
