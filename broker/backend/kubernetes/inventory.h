// A Kubernetes cluster as the neutral inventory (cluster/inventory.h), from
// its nodes and pods as the API lists them: each node with its allocatable
// CPUs, memory and `nvidia.com/gpu` and what bound, unfinished pods request
// of them; the GPU type from the node's labels as real clusters carry it
// (GPU feature discovery's nvidia.com/gpu.product, GKE's
// cloud.google.com/gke-accelerator, SkyPilot's skypilot.co/accelerator, and
// the site's own keys first); one partition, the namespace jobs go to. Pods
// are the queue: pending ones are demand ahead, running ones hold their
// share until their deadline (activeDeadlineSeconds) if they have one.
// Pure: facts (facts.h) in, inventory out.
#pragma once

#include <json/json.h>

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "broker/cluster/inventory.h"
#include "broker/kube/facts.h"
#include "broker/util/json_mask.h"

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
std::pair<std::string, std::string> GpuTypeOfNode(const NodeFacts& node,
                                                  const std::vector<std::string>& keys);

// Node states: "idle", "mixed", "allocated"; "drain" for nodes that
// untolerated taints or a cordon keep from new pods, "down" when NotReady.
// A node's GPU label is one of its features, "key=value"; a GPU taint that
// only GPU pods tolerate is another, "gpu-taint:<key>".
cluster::Inventory InventoryFromFacts(const std::vector<const NodeFacts*>& nodes,
                                      const std::vector<const PodFacts*>& pods,
                                      const InventoryOptions& options);
// The same from the objects' JSON (read through facts.h).
cluster::Inventory InventoryFromObjects(const std::vector<Json::Value>& nodes,
                                        const std::vector<Json::Value>& pods,
                                        const InventoryOptions& options);

// What the queue and a job's status keep of skyslurm's own pods and Jobs
// (a real pod is several KB; this is a few hundred bytes). A list is parsed
// through the mask (util/json_mask.h), so the rest is never built.
const JsonMask& PodMask();
const JsonMask& JobMask();

// The taints every skyslurm pod tolerates (the GPU operators' usual ones).
bool ToleratedTaint(std::string_view key, std::string_view effect);

}  // namespace skyslurm::kube
