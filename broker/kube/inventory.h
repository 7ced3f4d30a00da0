// A Kubernetes cluster as the neutral inventory (cluster/inventory.h), from
// its nodes and pods as the API lists them: each node with its allocatable
// CPUs, memory and `nvidia.com/gpu` and what bound, unfinished pods request
// of them; the GPU type from the node's labels as real clusters carry it
// (GPU feature discovery's nvidia.com/gpu.product, GKE's
// cloud.google.com/gke-accelerator, SkyPilot's skypilot.co/accelerator, and
// the site's own keys first); one partition, the namespace jobs go to. Pods
// are the queue: pending ones are demand ahead, running ones hold their
// share until their deadline (activeDeadlineSeconds) if they have one.
// Pure: JSON in, inventory out.
#pragma once

#include <json/json.h>

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "broker/cluster/inventory.h"

namespace skyslurm::kube {

inline constexpr const char* kGpuResource = "nvidia.com/gpu";
inline constexpr const char* kGpuTaintFeature = "gpu-taint:";

// Whether a pod with (or without) GPUs may be placed on the node.
bool TakesPod(const cluster::Node& node, bool asks_gpus);

struct InventoryOptions {
  std::string cluster;
  std::string partition;                // the namespace
  std::vector<std::string> gpu_labels;  // tried before the usual keys
  std::time_t now = 0;
};

// The usual GPU label keys after `extra`: where a node's GPU type is read.
std::vector<std::string> GpuLabelKeys(const std::vector<std::string>& extra);
// The node's GPU type from its labels ("" when it carries none), and the
// label key it came from.
std::pair<std::string, std::string> GpuTypeOfNode(const Json::Value& node,
                                                  const std::vector<std::string>& keys);

// What a pod asks of a node: containers' requests (a GPU's limit, which is
// its request), summed.
struct PodDemand {
  std::int64_t gpus = 0;
  std::int64_t millicores = 0;
  std::int64_t bytes = 0;
};
PodDemand DemandOf(const Json::Value& pod);

// Bound to a node and not finished: it holds its share.
bool HoldsItsNode(const Json::Value& pod);

// Node states: "idle", "mixed", "allocated"; "drain" for nodes that
// untolerated taints or a cordon keep from new pods, "down" when NotReady.
// A node's GPU label is one of its features, "key=value"; a GPU taint that
// only GPU pods tolerate is another, "gpu-taint:<key>".
cluster::Inventory InventoryFromObjects(const std::vector<const Json::Value*>& nodes,
                                        const std::vector<const Json::Value*>& pods,
                                        const InventoryOptions& options);
// The same from the objects themselves.
cluster::Inventory InventoryFromObjects(const std::vector<Json::Value>& nodes,
                                        const std::vector<Json::Value>& pods,
                                        const InventoryOptions& options);

// What a watch keeps of a node, a pod and a Job: the fields the inventory,
// the queue and the job's status read, and nothing else (a real pod is
// several KB; this is a few hundred bytes).
Json::Value TrimNode(const Json::Value& node);
Json::Value TrimPod(const Json::Value& pod);
Json::Value TrimJob(const Json::Value& job);

// The taints every skyslurm pod tolerates (the GPU operators' usual ones).
bool ToleratedTaint(const Json::Value& taint);

}  // namespace skyslurm::kube
