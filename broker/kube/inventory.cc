#include "broker/kube/inventory.h"

#include <algorithm>
#include <map>

#include "broker/kube/quantity.h"
#include "broker/util/timestamp.h"

namespace skyslurm::kube {
namespace {

std::int64_t QuantityOr0(const Json::Value& v,
                         std::optional<std::int64_t> (*parse)(std::string_view)) {
  if (!v.isString()) return 0;
  return parse(v.asString()).value_or(0);
}

bool Ready(const Json::Value& node) {
  for (const auto& c : node["status"]["conditions"]) {
    if (c["type"].asString() == "Ready") return c["status"].asString() == "True";
  }
  return false;
}

}  // namespace

std::vector<std::string> GpuLabelKeys(const std::vector<std::string>& extra) {
  std::vector<std::string> keys = extra;
  for (const char* k :
       {"nvidia.com/gpu.product", "cloud.google.com/gke-accelerator", "skypilot.co/accelerator"}) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.emplace_back(k);
  }
  return keys;
}

std::pair<std::string, std::string> GpuTypeOfNode(const Json::Value& node,
                                                  const std::vector<std::string>& keys) {
  const Json::Value& labels = node["metadata"]["labels"];
  for (const auto& k : keys) {
    if (labels.isMember(k) && !labels[k].asString().empty()) return {labels[k].asString(), k};
  }
  return {"", ""};
}

namespace {

void Keep(const Json::Value& from, Json::Value& to, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (from.isMember(k)) to[k] = from[k];
  }
}

}  // namespace

Json::Value TrimNode(const Json::Value& node) {
  Json::Value t(Json::objectValue);
  Keep(node["metadata"], t["metadata"], {"name", "namespace", "labels", "resourceVersion"});
  Keep(node["spec"], t["spec"], {"taints", "unschedulable"});
  Keep(node["status"], t["status"], {"allocatable"});
  for (const auto& c : node["status"]["conditions"]) {
    if (c["type"].asString() == "Ready") t["status"]["conditions"].append(c);
  }
  return t;
}

Json::Value TrimPod(const Json::Value& pod) {
  Json::Value t(Json::objectValue);
  Keep(
      pod["metadata"], t["metadata"],
      {"name", "namespace", "labels", "creationTimestamp", "resourceVersion", "deletionTimestamp"});
  Keep(pod["spec"], t["spec"], {"nodeName", "nodeSelector", "activeDeadlineSeconds"});
  for (const auto& c : pod["spec"]["containers"]) {
    Json::Value kept(Json::objectValue);
    kept["resources"] = c["resources"];
    t["spec"]["containers"].append(kept);
  }
  Keep(pod["status"], t["status"], {"phase", "startTime", "conditions", "containerStatuses"});
  return t;
}

Json::Value TrimJob(const Json::Value& job) {
  Json::Value t(Json::objectValue);
  Keep(job["metadata"], t["metadata"],
       {"name", "namespace", "labels", "annotations", "creationTimestamp", "resourceVersion",
        "deletionTimestamp", "uid"});
  Keep(job["spec"], t["spec"], {"completions", "suspend"});
  t["status"] = job["status"];
  return t;
}

bool ToleratedTaint(const Json::Value& taint) {
  const std::string key = taint["key"].asString();
  const std::string effect = taint["effect"].asString();
  if (effect == "PreferNoSchedule") return true;
  return key == kGpuResource || key == "nvidia.com/gpu.present" || key == "skypilot.co/gpu" ||
         key == "cloud.google.com/gke-accelerator";
}

PodDemand DemandOf(const Json::Value& pod) {
  PodDemand d;
  for (const auto& c : pod["spec"]["containers"]) {
    const Json::Value& req = c["resources"]["requests"];
    const Json::Value& lim = c["resources"]["limits"];
    auto pick = [&](const char* name) -> const Json::Value& {
      return req.isMember(name) ? req[name] : lim[name];
    };
    d.gpus +=
        QuantityOr0(lim.isMember(kGpuResource) ? lim[kGpuResource] : req[kGpuResource], Count);
    d.millicores += QuantityOr0(pick("cpu"), Millicores);
    d.bytes += QuantityOr0(pick("memory"), Bytes);
  }
  return d;
}

bool TakesPod(const cluster::Node& node, bool asks_gpus) {
  if (!node.usable()) return false;
  if (asks_gpus) return true;
  for (const auto& f : node.features) {
    if (f.starts_with(kGpuTaintFeature)) return false;
  }
  return true;
}

bool HoldsItsNode(const Json::Value& pod) {
  const std::string phase = pod["status"]["phase"].asString();
  return !pod["spec"]["nodeName"].asString().empty() && phase != "Succeeded" && phase != "Failed";
}

cluster::Inventory InventoryFromObjects(const std::vector<Json::Value>& nodes,
                                        const std::vector<Json::Value>& pods,
                                        const InventoryOptions& options) {
  std::vector<const Json::Value*> n, p;
  for (const auto& v : nodes) n.push_back(&v);
  for (const auto& v : pods) p.push_back(&v);
  return InventoryFromObjects(n, p, options);
}

cluster::Inventory InventoryFromObjects(const std::vector<const Json::Value*>& nodes,
                                        const std::vector<const Json::Value*>& pods,
                                        const InventoryOptions& options) {
  cluster::Inventory inv;
  inv.probed_at = options.now;
  cluster::Description& d = inv.description;
  d.name = options.cluster;
  const std::vector<std::string> keys = GpuLabelKeys(options.gpu_labels);
  std::map<std::string, PodDemand> used;  // by node
  for (const Json::Value* pp : pods) {
    const Json::Value& pod = *pp;
    if (!HoldsItsNode(pod)) continue;
    const PodDemand p = DemandOf(pod);
    PodDemand& u = used[pod["spec"]["nodeName"].asString()];
    u.gpus += p.gpus;
    u.millicores += p.millicores;
    u.bytes += p.bytes;
  }
  cluster::Partition part;
  part.name = options.partition;
  part.is_default = true;
  for (const Json::Value* np : nodes) {
    const Json::Value& n = *np;
    cluster::Node node;
    node.name = n["metadata"]["name"].asString();
    const Json::Value& alloc = n["status"]["allocatable"];
    node.cpus = QuantityOr0(alloc["cpu"], Millicores) / 1000;
    node.memory_mb = QuantityOr0(alloc["memory"], Bytes) >> 20;
    const std::int64_t gpus = QuantityOr0(alloc[kGpuResource], Count);
    const auto [type, label] = GpuTypeOfNode(n, keys);
    if (gpus > 0) node.gres.push_back({"gpu", type, gpus});
    // The label that carries it: a pod asks for the type by that key.
    if (!type.empty()) node.features.push_back(label + "=" + type);
    const PodDemand u = used.count(node.name) != 0 ? used[node.name] : PodDemand{};
    if (gpus > 0) node.gres_used.push_back({"gpu", type, std::min(u.gpus, gpus)});
    node.alloc_cpus = (u.millicores + 999) / 1000;
    node.alloc_memory_mb = u.bytes >> 20;
    node.partitions = {options.partition};
    bool untolerated = n["spec"]["unschedulable"].asBool();
    for (const auto& t : n["spec"]["taints"]) {
      const std::string effect = t["effect"].asString();
      if (effect != "NoSchedule" && effect != "NoExecute") continue;
      if (!ToleratedTaint(t)) {
        untolerated = true;
      } else {
        // Kept for GPU work: only a pod asking for GPUs tolerates it.
        node.features.push_back(std::string(kGpuTaintFeature) + t["key"].asString());
      }
    }
    if (!Ready(n)) {
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
  for (const Json::Value* pp : pods) {
    const Json::Value& pod = *pp;
    const std::string phase = pod["status"]["phase"].asString();
    if (phase == "Succeeded" || phase == "Failed") continue;
    cluster::QueuedJob q;
    const Json::Value& meta = pod["metadata"];
    q.job_id = meta["namespace"].asString() + "/" + meta["name"].asString();
    q.name = meta["labels"]["job-name"].asString();
    q.partition = options.partition;
    q.user = meta["labels"]["skyslurm.io/user"].asString();
    const bool bound = !pod["spec"]["nodeName"].asString().empty();
    q.state = bound ? "RUNNING" : "PENDING";
    q.reason = bound ? "None" : "Unschedulable";
    q.gpus_per_node = DemandOf(pod).gpus;
    q.nodes = 1;
    for (const auto& k : keys) {
      const Json::Value& sel = pod["spec"]["nodeSelector"];
      if (sel.isMember(k)) q.gpu_type = sel[k].asString();
    }
    q.submit_time = ParseRfc3339(meta["creationTimestamp"].asString()).value_or(0);
    q.start_time = ParseRfc3339(pod["status"]["startTime"].asString()).value_or(0);
    if (const Json::Value& deadline = pod["spec"]["activeDeadlineSeconds"]; deadline.isIntegral()) {
      q.time_limit_minutes = (deadline.asInt64() + 59) / 60;
    }
    q.nodelist = pod["spec"]["nodeName"].asString();
    inv.jobs.push_back(std::move(q));
  }
  return inv;
}

}  // namespace skyslurm::kube
