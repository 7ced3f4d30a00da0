#include "broker/job/gpu_demand.h"

#include <algorithm>

#include "broker/job/request.h"

namespace skyslurm::job {
namespace {

std::int64_t CeilDiv(std::int64_t a, std::int64_t b) { return b <= 0 ? a : (a + b - 1) / b; }

}  // namespace

std::int64_t GpuDemand::EvenShare() const { return CeilDiv(asked_in_all, nodes); }

GpuDemand DemandOf(const Request& r) {
  GpuDemand d;
  d.nodes = r.nodes ? std::max<std::int64_t>(r.nodes->min, 1) : 1;
  d.tasks_per_node =
      r.ntasks_per_node ? *r.ntasks_per_node : (r.ntasks ? CeilDiv(*r.ntasks, d.nodes) : 1);
  const std::int64_t tasks = r.ntasks ? *r.ntasks : d.tasks_per_node * d.nodes;
  for (const GpuAsk& ask : r.gpus) {
    if (d.type.empty()) d.type = ask.type;
    switch (ask.scope) {
      case GpuAsk::Scope::kPerNode:
        d.per_node = std::max(d.per_node, ask.count);
        d.total = std::max(d.total, ask.count * d.nodes);
        break;
      case GpuAsk::Scope::kPerSocket:
        d.per_socket = true;
        d.per_node = std::max(d.per_node, ask.count);
        d.total = std::max(d.total, ask.count * d.nodes);
        break;
      case GpuAsk::Scope::kPerTask:
        d.per_task = true;
        d.per_node = std::max(d.per_node, ask.count * d.tasks_per_node);
        d.total = std::max(d.total, ask.count * tasks);
        break;
      case GpuAsk::Scope::kPerJob:
        d.per_job = true;
        d.asked_in_all = std::max(d.asked_in_all, ask.count);
        d.total = std::max(d.total, ask.count);
        if (r.nodes) d.per_node = std::max(d.per_node, CeilDiv(ask.count, d.nodes));
        break;
    }
  }
  return d;
}

}  // namespace skyslurm::job
