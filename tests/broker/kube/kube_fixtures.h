// Nodes, pods and jobs shaped as a real API server lists them (the fields
// skyslurm reads, with the names and nesting of the v1 and batch/v1 APIs).
#pragma once

#include <json/json.h>

#include <memory>
#include <string>

namespace skyslurm::kube::testing {

inline Json::Value Parse(const std::string& text) {
  Json::Value v;
  Json::CharReaderBuilder b;
  std::unique_ptr<Json::CharReader> r(b.newCharReader());
  std::string errors;
  r->parse(text.data(), text.data() + text.size(), &v, &errors);
  return v;
}

inline Json::Value Node(const std::string& name, int gpus, const std::string& product,
                        bool ready = true, const std::string& taint_key = "nvidia.com/gpu") {
  return Parse(
      R"({"metadata":{"name":")" + name + R"(","labels":{"kubernetes.io/hostname":")" + name +
      R"(","nvidia.com/gpu.product":")" + product + R"(","nvidia.com/gpu.count":")" +
      std::to_string(gpus) + R"("}},"spec":{"taints":[{"key":")" + taint_key +
      R"(","value":"present","effect":"NoSchedule"}]},"status":{"allocatable":{"cpu":"64",)"
      R"("memory":"512Gi","pods":"110","nvidia.com/gpu":")" +
      std::to_string(gpus) + R"("},"conditions":[{"type":"Ready","status":")" +
      (ready ? "True" : "False") + R"("}]}})");
}

inline Json::Value Pod(const std::string& name, const std::string& node, int gpus,
                       const std::string& phase,
                       const std::string& created = "2026-12-02T01:00:00Z",
                       const std::string& extra_spec = "") {
  return Parse(R"({"metadata":{"name":")" + name +
               R"(","namespace":"default","creationTimestamp":")" + created +
               R"(","labels":{"job-name":"train"}},"spec":{)" +
               (node.empty() ? "" : R"("nodeName":")" + node + R"(",)") + extra_spec +
               R"("containers":[{"name":"c","resources":{"requests":{"cpu":"2","memory":"8Gi"},)"
               R"("limits":{"nvidia.com/gpu":")" +
               std::to_string(gpus) + R"("}}}]},"status":{"phase":")" + phase +
               R"(","startTime":"2026-12-02T01:00:00Z"}})");
}

}  // namespace skyslurm::kube::testing
