// The dashboard's view of one cluster (docs/dashboard.md, GET /v1/clusters):
// reachable or not and since when, its GPUs by type and partition (the
// `skyslurm gpus` rows), its nodes by state, its partitions, and for an
// elastic cluster its boot time and price. Pure: made from the cluster's
// last probe, which skyslurmd keeps warm each poll.
#pragma once

#include <json/json.h>

#include <cstdint>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "broker/catalog/accelerators.h"
#include "broker/cloud/ledger.h"
#include "broker/cluster/inventory.h"
#include "broker/place/planner.h"
#include "broker/store/job_store.h"

namespace skyslurm::daemon {

struct PartitionSummary {
  std::string name;
  bool is_default = false;
  std::int64_t nodes = 0;
  std::int64_t gpus = 0;
  std::string state;  // Slurm's: UP, DOWN, DRAIN, INACTIVE
};

struct ClusterCard {
  std::string name;
  // Its kind's name ("slurm", "kubernetes"), or "elastic" for a cluster of
  // billed nodes that boot on demand (then `elastic` holds).
  std::string kind;
  bool elastic = false;
  bool home = false;
  bool reachable = false;
  std::time_t since = 0;     // reachable (or not) since then; 0: not known
  std::time_t answered = 0;  // its last answer
  std::string error;         // why it is not reachable
  bool probed = false;       // a probe's answer is known (else the rest is empty)
  std::vector<cluster::GpuRow> gpus;
  // Each GPU once (a node in two partitions is in two rows of `gpus`): in
  // all, and by type (the catalog's name, else the cluster's spelling).
  std::int64_t total_gpus = 0, free_gpus = 0, pending_gpus = 0;
  struct TypeCount {
    std::string type;
    std::int64_t total = 0, free = 0, pending = 0;
  };
  std::vector<TypeCount> gpu_types;
  // Nodes by state: idle, mixed, allocated, down, drained, powered_down,
  // booting, other; states with no node left out.
  std::map<std::string, std::int64_t> nodes;
  std::vector<PartitionSummary> partitions;
  // Elastic clusters: a node's boot and a GPU-hour's price (nullopt: free).
  int boot_seconds = 0;
  std::string boot_basis;
  std::optional<double> price_per_gpu_hour;
};

// The bucket a node's Slurm state counts in ("mixed+DRAIN" is drained,
// "idle+CLOUD+POWERED_DOWN" powered_down).
std::string NodeStateBucket(const cluster::Node& node);

// The card of one cluster from its handle and last probe (null: none known
// yet). `ledger`: the elastic cluster's power-up ledger, when it has one.
ClusterCard MakeClusterCard(const place::ClusterHandle& handle, const cluster::Inventory* inventory,
                            const catalog::AcceleratorCatalog& catalog,
                            const std::vector<cloud::PowerUp>* ledger);

// Its GPUs as one sample for the charts.
store::GpuSample GpuSampleOf(const ClusterCard& card, std::time_t now);

Json::Value ClusterCardJson(const ClusterCard& card, const std::string& currency);

}  // namespace skyslurm::daemon
