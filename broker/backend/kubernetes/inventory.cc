#include "broker/backend/kubernetes/inventory.h"

#include <algorithm>
#include <unordered_map>

namespace skyslurm::kube {
std::vector<std::string> GpuLabelKeys(const std::vector<std::string>& extra) {
  std::vector<std::string> keys = extra;
  for (const char* k :
       {"nvidia.com/gpu.product", "cloud.google.com/gke-accelerator", "skypilot.co/accelerator"}) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.emplace_back(k);
  }
  return keys;
}

std::pair<std::string, std::string> GpuTypeOfNode(const NodeFacts& node,
                                                  const std::vector<std::string>& keys) {
  for (const auto& k : keys) {
    if (const std::string_view v = LabelOf(node.labels, k); !v.empty()) return {std::string(v), k};
  }
  return {"", ""};
}

const JsonMask& PodMask() {
  static const JsonMask mask = JsonMask::Of(
      {"metadata.name", "metadata.namespace", "metadata.labels", "metadata.creationTimestamp",
       "metadata.resourceVersion", "metadata.deletionTimestamp", "spec.nodeName",
       "spec.nodeSelector", "spec.activeDeadlineSeconds", "spec.containers.resources",
       "status.phase", "status.startTime", "status.conditions", "status.containerStatuses"});
  return mask;
}

const JsonMask& JobMask() {
  static const JsonMask mask = JsonMask::Of(
      {"metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations",
       "metadata.creationTimestamp", "metadata.resourceVersion", "metadata.deletionTimestamp",
       "metadata.uid", "spec.completions", "spec.suspend", "status"});
  return mask;
}

bool ToleratedTaint(std::string_view key, std::string_view effect) {
  if (effect == "PreferNoSchedule") return true;
  return key == kGpuResource || key == "nvidia.com/gpu.present" || key == "skypilot.co/gpu" ||
         key == "cloud.google.com/gke-accelerator";
}

bool TakesPod(const cluster::Node& node, bool asks_gpus) {
  if (!node.usable()) return false;
  if (asks_gpus) return true;
  for (const auto& f : node.features) {
    if (f.starts_with(kGpuTaintFeature)) return false;
  }
  return true;
}

cluster::Inventory InventoryFromObjects(const std::vector<Json::Value>& nodes,
                                        const std::vector<Json::Value>& pods,
                                        const InventoryOptions& options) {
  Json::StreamWriterBuilder w;
  w["indentation"] = "";
  std::vector<NodeFacts> node_facts;
  std::vector<PodFacts> pod_facts;
  for (const auto& n : nodes) {
    if (auto f = ReadNodeFacts(Json::writeString(w, n)); f.ok()) node_facts.push_back(*f);
  }
  for (const auto& p : pods) {
    if (auto f = ReadPodFacts(Json::writeString(w, p)); f.ok()) pod_facts.push_back(*f);
  }
  std::vector<const NodeFacts*> np;
  std::vector<const PodFacts*> pp;
  for (const auto& f : node_facts) np.push_back(&f);
  for (const auto& f : pod_facts) pp.push_back(&f);
  return InventoryFromFacts(np, pp, options);
}

cluster::Inventory InventoryFromFacts(const std::vector<const NodeFacts*>& nodes,
                                      const std::vector<const PodFacts*>& pods,
                                      const InventoryOptions& options) {
  cluster::Inventory inv;
  inv.probed_at = options.now;
  cluster::Description& d = inv.description;
  d.name = options.cluster;
  const std::vector<std::string> keys = GpuLabelKeys(options.gpu_labels);
  std::unordered_map<std::string_view, PodDemand> used;  // by node
  used.reserve(nodes.size());
  for (const PodFacts* pod : pods) {
    if (!pod->HoldsItsNode()) continue;
    PodDemand& u = used[pod->node];
    u.gpus += pod->demand.gpus;
    u.millicores += pod->demand.millicores;
    u.bytes += pod->demand.bytes;
  }
  cluster::Partition part;
  part.name = options.partition;
  part.is_default = true;
  for (const NodeFacts* n : nodes) {
    cluster::Node node;
    node.name = n->name;
    node.cpus = n->millicores / 1000;
    node.memory_mb = n->bytes >> 20;
    const std::int64_t gpus = n->gpus;
    const auto [type, label] = GpuTypeOfNode(*n, keys);
    if (gpus > 0) node.gres.push_back({"gpu", type, gpus});
    // The label that carries it: a pod asks for the type by that key.
    if (!type.empty()) node.features.push_back(label + "=" + type);
    const auto found = used.find(n->name);
    const PodDemand u = found != used.end() ? found->second : PodDemand{};
    if (gpus > 0) node.gres_used.push_back({"gpu", type, std::min(u.gpus, gpus)});
    node.alloc_cpus = (u.millicores + 999) / 1000;
    node.alloc_memory_mb = u.bytes >> 20;
    node.partitions = {options.partition};
    bool untolerated = n->unschedulable;
    for (const auto& t : n->taints) {
      if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
      if (!ToleratedTaint(t.key, t.effect)) {
        untolerated = true;
      } else {
        // Kept for GPU work: only a pod asking for GPUs tolerates it.
        node.features.push_back(std::string(kGpuTaintFeature) + t.key);
      }
    }
    if (!n->ready) {
      node.state = "down";
    } else if (untolerated) {
      node.state = "drain";
    } else if (u.gpus == 0 && u.millicores == 0) {
      node.state = "idle";
    } else if ((gpus > 0 && u.gpus >= gpus) || u.millicores >= node.cpus * 1000) {
      node.state = "allocated";
    } else {
      node.state = "mixed";
    }
    part.nodes.push_back(node.name);
    d.nodes.push_back(std::move(node));
  }
  d.partitions.push_back(std::move(part));
  d.modules_known = false;
  d.BuildIndex();

  // The queue: every unfinished pod, one record each.
  inv.jobs.reserve(pods.size());
  for (const PodFacts* pod : pods) {
    if (pod->Finished()) continue;
    cluster::QueuedJob& q = inv.jobs.emplace_back();
    q.job_id = KeyOf(*pod);
    q.name = pod->job_name;
    q.partition = options.partition;
    q.user = pod->user;
    const bool bound = !pod->node.empty();
    q.phase = bound ? cluster::JobPhase::kRunning : cluster::JobPhase::kPending;
    q.state = bound ? "RUNNING" : "PENDING";
    q.reason = bound ? "None" : "Unschedulable";
    q.gpus_per_node = pod->demand.gpus;
    q.nodes = 1;
    for (const auto& k : keys) {
      if (const std::string_view v = LabelOf(pod->node_selector, k); !v.empty()) {
        q.gpu_type = std::string(v);
      }
    }
    q.submit_time = pod->created;
    q.start_time = pod->started;
    if (pod->deadline_seconds) q.time_limit_minutes = (*pod->deadline_seconds + 59) / 60;
    q.nodelist = pod->node;
  }
  return inv;
}

}  // namespace skyslurm::kube
