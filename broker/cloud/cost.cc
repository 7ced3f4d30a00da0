#include "broker/cloud/cost.h"

#include <algorithm>

namespace skyslurm::cloud {

double NodeTimeCost(double node_seconds, int gpus_per_node, double price_per_gpu_hour) {
  return node_seconds / 3600.0 * std::max(gpus_per_node, 1) * price_per_gpu_hour;
}

double ExpectedCost(const ExpectedUse& use, double price_per_gpu_hour) {
  const auto held = use.boot + use.run + use.idle_tail;
  return NodeTimeCost(
      static_cast<double>(std::max(use.nodes, 0)) * static_cast<double>(held.count()),
      use.gpus_per_node, price_per_gpu_hour);
}

}  // namespace skyslurm::cloud
