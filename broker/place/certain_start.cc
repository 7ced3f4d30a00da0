#include "broker/place/certain_start.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "broker/job/option_table.h"
#include "broker/place/start_estimate.h"
#include "broker/util/strings.h"

namespace skyslurm::place {
namespace {

// Options that only size the job, or do not bear on when it starts.
bool SizeOnly(job::Opt id) {
  using job::Opt;
  switch (id) {
    case Opt::kGres:
    case Opt::kGpus:
    case Opt::kGpusPerNode:
    case Opt::kNodes:
    case Opt::kNtasks:
    case Opt::kNtasksPerNode:
    case Opt::kCpusPerTask:
    case Opt::kMem:
    case Opt::kMemPerCpu:
    case Opt::kTime:
    case Opt::kJobName:
    case Opt::kOutput:
    case Opt::kError:
    case Opt::kInput:
    case Opt::kHold:
    case Opt::kParsable:
    case Opt::kComment:
    case Opt::kChdir:
    case Opt::kExport:
    case Opt::kPartition:
    case Opt::kQuiet:
    case Opt::kVerbose:
      return true;
    default:
      return job::SkyOptionOf(id).has_value();  // skyslurm's own: no size
  }
}

}  // namespace

std::optional<std::string> StartsNowForCertain(const job::Request& request,
                                               const cluster::Inventory& inventory,
                                               const std::string& partition,
                                               const catalog::AcceleratorCatalog& catalog,
                                               std::time_t now) {
  if (request.tool != job::Tool::kSbatch || request.hetjob || !request.other_gres.empty()) {
    return std::nullopt;
  }
  for (const auto& s : request.settings) {
    if (!SizeOnly(s.id())) return std::nullopt;
  }
  const cluster::Description& d = inventory.description;
  const cluster::Partition* p = d.FindPartition(partition);
  if (p == nullptr || p->state != "UP") return std::nullopt;
  // Per node: GPUs of one type (or any), tasks and their CPUs, memory.
  const std::int64_t nodes = request.nodes ? request.nodes->min : 1;
  if (request.nodes && request.nodes->max != nodes) return std::nullopt;
  if (p->max_nodes && nodes > *p->max_nodes) return std::nullopt;
  // Each node's GPUs exactly: asked per node, or in all on one node.
  const job::GpuDemand& demand = request.gpu_demand;
  if (!demand.exact_per_node() || (demand.per_job && nodes != 1)) return std::nullopt;
  const std::int64_t gpus = demand.per_job ? demand.asked_in_all : demand.per_node;
  const std::string& type = demand.type;
  std::int64_t tasks_per_node = 1;
  if (request.ntasks_per_node) {
    tasks_per_node = *request.ntasks_per_node;
  } else if (request.ntasks) {
    if (*request.ntasks % nodes != 0) return std::nullopt;
    tasks_per_node = *request.ntasks / nodes;
  }
  const std::int64_t cpus = tasks_per_node * request.cpus_per_task.value_or(1);
  std::int64_t memory = 0;
  if (request.mem_mb) {
    memory = *request.mem_mb;
  } else if (request.mem_per_cpu_mb) {
    memory = *request.mem_per_cpu_mb * cpus;
  }
  // Within the partition's time limit (else it never starts).
  if (request.time_limit && p->max_time_minutes &&
      (request.time_limit->infinite() || *request.time_limit->minutes > *p->max_time_minutes)) {
    return std::nullopt;
  }
  // Nothing pending where these nodes are (a pending job may be ahead).
  const std::set<std::string> overlapping = OverlappingPartitions(d, partition);
  for (const auto& j : inventory.jobs) {
    if (!cluster::IsWaiting(j.phase)) continue;
    if (j.reason.starts_with("JobHeld") || j.reason == "Dependency" || j.reason == "BeginTime" ||
        j.reason == "JobArrayTaskLimit") {
      continue;  // cannot start now either way: not ahead
    }
    // A job pending for several partitions lists them comma-separated.
    for (const std::string& part : SplitList(j.partition)) {
      if (overlapping.contains(part)) return std::nullopt;
    }
  }
  // Wholly idle nodes of the job's shape in the partition.
  std::int64_t fitting = 0;
  for (const auto& n : d.nodes) {
    // Idle in its own state; a powered-up node of an elastic cluster says
    // so with a flag ("idle+CLOUD").
    if (n.state.substr(0, n.state.find('+')) != "idle" || !n.usable()) continue;
    if (std::find(n.partitions.begin(), n.partitions.end(), partition) == n.partitions.end()) {
      continue;
    }
    if (n.cpus < cpus || (memory > 0 && n.memory_mb < memory)) continue;
    if (n.alloc_cpus > 0 || !n.gres_used.empty()) {
      bool used = n.alloc_cpus > 0;
      for (const auto& g : n.gres_used) used = used || g.count > 0;
      if (used) continue;
    }
    std::int64_t have = 0;
    for (const auto& g : n.gres) {
      if (g.name != "gpu") continue;
      if (type.empty() || g.type == type || catalog.Same(g.type, type)) have += g.count;
    }
    if (have < gpus) continue;
    ++fitting;
  }
  if (fitting < nodes) return std::nullopt;
  return fmt::format("{} idle node(s) of its shape and nothing pending there, {} s ago: not asked",
                     fitting, std::max<std::time_t>(0, now - inventory.probed_at));
}

}  // namespace skyslurm::place
