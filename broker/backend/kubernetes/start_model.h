// When a Kubernetes cluster would start a job's pods (pure). "Now" when the
// nodes' free share fits every pod after the pods pending ahead take theirs
// (first fit, in creation order, as the default scheduler tends to); else
// the first moment running pods' ends free enough: a pod with a deadline
// (activeDeadlineSeconds) ends by it, one without is assumed to hold its
// node for `assumed_runtime`. GPUs are modelled exactly; CPUs and memory
// only against what is free now. The answer says which basis it used.
#pragma once

#include <chrono>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "broker/backend/kubernetes/job_translator.h"
#include "broker/cluster/inventory.h"

namespace skyslurm::kube {

struct ModelledStart {
  std::time_t start = 0;
  std::vector<std::string> nodes;  // where the pods would go
  std::string basis;
};

// nullopt: no start in view (the pods fit on no node even when empty).
std::optional<ModelledStart> ModelStart(
    const JobShape& shape, const cluster::Inventory& inventory, std::time_t now,
    std::chrono::seconds assumed_runtime = std::chrono::hours(1));

}  // namespace skyslurm::kube
