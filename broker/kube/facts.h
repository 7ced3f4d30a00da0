// What a probe reads of a node and of a pod, read straight from their JSON
// with a cursor (util/json_cursor.h), never built as a tree: a pod of 3 KB
// becomes a few strings and numbers in a couple of microseconds, so a list of
// 50,000 pods and a watch on them cost little time and memory. The inventory
// (inventory.h) is computed from these alone.
#pragma once

#include <json/json.h>

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/util/json_cursor.h"
#include "broker/util/status.h"

namespace skyslurm::kube {

using Labels = std::vector<std::pair<std::string, std::string>>;

// The value of `key` in `labels` ("" when absent).
std::string_view LabelOf(const Labels& labels, std::string_view key);

struct NodeFacts {
  std::string name;
  std::string resource_version;
  Labels labels;
  struct Taint {
    std::string key, effect;
  };
  std::vector<Taint> taints;
  bool unschedulable = false;
  bool ready = false;  // the Ready condition is True
  // Allocatable.
  std::int64_t millicores = 0, bytes = 0, gpus = 0;
};

// What a pod asks of a node: its containers' requests summed (a CPU or
// memory limit stands for an absent request; for GPUs the limit is the
// request).
struct PodDemand {
  std::int64_t gpus = 0;
  std::int64_t millicores = 0;
  std::int64_t bytes = 0;
};

struct PodFacts {
  std::string namespace_name, name;
  std::string resource_version;
  std::string node;            // spec.nodeName: "" while unbound
  std::string phase;           // status.phase
  std::string job_name, user;  // the labels job-name and skyslurm.io/user
  Labels node_selector;
  PodDemand demand;
  std::time_t created = 0, started = 0;
  std::optional<std::int64_t> deadline_seconds;  // spec.activeDeadlineSeconds

  // Bound to a node and not finished: it holds its share.
  bool HoldsItsNode() const;
  bool Finished() const { return phase == "Succeeded" || phase == "Failed"; }
};

// From the object's JSON at the cursor (a list's item), which moves past it.
Result<NodeFacts> ReadNodeFacts(JsonCursor& cursor);
Result<PodFacts> ReadPodFacts(JsonCursor& cursor);
// From the object's JSON text, all of it.
Result<NodeFacts> ReadNodeFacts(std::string_view json);
Result<PodFacts> ReadPodFacts(std::string_view json);

// "namespace/name" (a node's namespace is "").
std::string KeyOf(const NodeFacts& node);
std::string KeyOf(const PodFacts& pod);
std::string KeyOf(const Json::Value& object);
inline const std::string& VersionOf(const NodeFacts& node) { return node.resource_version; }
inline const std::string& VersionOf(const PodFacts& pod) { return pod.resource_version; }
std::string VersionOf(const Json::Value& object);

}  // namespace skyslurm::kube
