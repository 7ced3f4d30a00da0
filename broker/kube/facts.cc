#include "broker/kube/facts.h"

#include "broker/kube/quantity.h"
#include "broker/util/timestamp.h"

namespace skyslurm::kube {
namespace {

constexpr std::string_view kGpu = "nvidia.com/gpu";

Status ReadLabels(JsonCursor& c, Labels* out) {
  return c.Object([&](std::string_view key) {
    std::string value;
    SKY_RETURN_IF_ERROR(c.String(&value));
    out->emplace_back(std::string(key), std::move(value));
    return OkStatus();
  });
}

// A map of quantities ({"cpu": "4", "nvidia.com/gpu": 2}): the three a
// probe reads, as written (absent stays nullopt).
struct Quantities {
  std::optional<std::string> cpu, memory, gpus;
};
Status ReadQuantities(JsonCursor& c, Quantities* out) {
  return c.Object([&](std::string_view key) {
    std::optional<std::string>* slot = key == "cpu"      ? &out->cpu
                                       : key == "memory" ? &out->memory
                                       : key == kGpu     ? &out->gpus
                                                         : nullptr;
    if (slot == nullptr) return c.Skip();
    return c.String(&slot->emplace());
  });
}

std::int64_t Or0(const std::optional<std::string>& text,
                 std::optional<std::int64_t> (*parse)(std::string_view)) {
  return text ? parse(*text).value_or(0) : 0;
}

Status ReadTime(JsonCursor& c, std::time_t* out) {
  std::string text;
  SKY_RETURN_IF_ERROR(c.String(&text));
  *out = ParseRfc3339(text).value_or(0);
  return OkStatus();
}

}  // namespace

std::string_view LabelOf(const Labels& labels, std::string_view key) {
  for (const auto& [k, v] : labels) {
    if (k == key) return v;
  }
  return {};
}

bool PodFacts::HoldsItsNode() const { return !node.empty() && !Finished(); }

Result<NodeFacts> ReadNodeFacts(JsonCursor& c) {
  NodeFacts n;
  Status s = c.Object([&](std::string_view part) {
    if (part == "metadata") {
      return c.Object([&](std::string_view key) {
        if (key == "name") return c.String(&n.name);
        if (key == "resourceVersion") return c.String(&n.resource_version);
        if (key == "labels") return ReadLabels(c, &n.labels);
        return c.Skip();
      });
    }
    if (part == "spec") {
      return c.Object([&](std::string_view key) {
        if (key == "unschedulable") return c.Bool(&n.unschedulable);
        if (key != "taints") return c.Skip();
        return c.Array([&] {
          NodeFacts::Taint t;
          SKY_RETURN_IF_ERROR(c.Object([&](std::string_view k) {
            if (k == "key") return c.String(&t.key);
            if (k == "effect") return c.String(&t.effect);
            return c.Skip();
          }));
          n.taints.push_back(std::move(t));
          return OkStatus();
        });
      });
    }
    if (part == "status") {
      return c.Object([&](std::string_view key) {
        if (key == "allocatable") {
          Quantities q;
          SKY_RETURN_IF_ERROR(ReadQuantities(c, &q));
          n.millicores = Or0(q.cpu, Millicores);
          n.bytes = Or0(q.memory, Bytes);
          n.gpus = Or0(q.gpus, Count);
          return OkStatus();
        }
        if (key != "conditions") return c.Skip();
        return c.Array([&] {
          std::string type, status;
          SKY_RETURN_IF_ERROR(c.Object([&](std::string_view k) {
            if (k == "type") return c.String(&type);
            if (k == "status") return c.String(&status);
            return c.Skip();
          }));
          if (type == "Ready") n.ready = status == "True";
          return OkStatus();
        });
      });
    }
    return c.Skip();
  });
  if (!s.ok()) return s.WithContext("a node");
  return n;
}

Result<NodeFacts> ReadNodeFacts(std::string_view json) {
  JsonCursor c(json);
  SKY_ASSIGN_OR_RETURN(NodeFacts n, ReadNodeFacts(c));
  SKY_RETURN_IF_ERROR(c.End().WithContext("a node"));
  return n;
}

Result<PodFacts> ReadPodFacts(JsonCursor& c) {
  PodFacts p;
  Status s = c.Object([&](std::string_view part) {
    if (part == "metadata") {
      return c.Object([&](std::string_view key) {
        if (key == "name") return c.String(&p.name);
        if (key == "namespace") return c.String(&p.namespace_name);
        if (key == "resourceVersion") return c.String(&p.resource_version);
        if (key == "creationTimestamp") return ReadTime(c, &p.created);
        if (key != "labels") return c.Skip();
        return c.Object([&](std::string_view label) {
          if (label == "job-name") return c.String(&p.job_name);
          if (label == "skyslurm.io/user") return c.String(&p.user);
          return c.Skip();
        });
      });
    }
    if (part == "spec") {
      return c.Object([&](std::string_view key) {
        if (key == "nodeName") return c.String(&p.node);
        if (key == "nodeSelector") return ReadLabels(c, &p.node_selector);
        if (key == "activeDeadlineSeconds") return c.Int(&p.deadline_seconds.emplace());
        if (key != "containers") return c.Skip();
        return c.Array([&] {
          Quantities requests, limits;
          SKY_RETURN_IF_ERROR(c.Object([&](std::string_view k) {
            if (k != "resources") return c.Skip();
            return c.Object([&](std::string_view r) {
              if (r == "requests") return ReadQuantities(c, &requests);
              if (r == "limits") return ReadQuantities(c, &limits);
              return c.Skip();
            });
          }));
          p.demand.gpus += Or0(limits.gpus ? limits.gpus : requests.gpus, Count);
          p.demand.millicores += Or0(requests.cpu ? requests.cpu : limits.cpu, Millicores);
          p.demand.bytes += Or0(requests.memory ? requests.memory : limits.memory, Bytes);
          return OkStatus();
        });
      });
    }
    if (part == "status") {
      return c.Object([&](std::string_view key) {
        if (key == "phase") return c.String(&p.phase);
        if (key == "startTime") return ReadTime(c, &p.started);
        return c.Skip();
      });
    }
    return c.Skip();
  });
  if (!s.ok()) return s.WithContext("a pod");
  return p;
}

Result<PodFacts> ReadPodFacts(std::string_view json) {
  JsonCursor c(json);
  SKY_ASSIGN_OR_RETURN(PodFacts p, ReadPodFacts(c));
  SKY_RETURN_IF_ERROR(c.End().WithContext("a pod"));
  return p;
}

std::string KeyOf(const NodeFacts& node) { return "/" + node.name; }
std::string KeyOf(const PodFacts& pod) { return pod.namespace_name + "/" + pod.name; }
std::string KeyOf(const Json::Value& object) {
  const Json::Value& meta = object["metadata"];
  return meta["namespace"].asString() + "/" + meta["name"].asString();
}
std::string VersionOf(const Json::Value& object) {
  return object["metadata"]["resourceVersion"].asString();
}

}  // namespace skyslurm::kube
