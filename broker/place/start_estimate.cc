#include "broker/place/start_estimate.h"

#include <algorithm>

#include "broker/backend/slurm_state.h"

namespace skyslurm::place {

std::set<std::string> OverlappingPartitions(const cluster::Description& d,
                                            const std::string& partition) {
  std::set<std::string> out = {partition};
  const cluster::Partition* p = d.FindPartition(partition);
  if (p == nullptr) return out;
  for (const auto& other : d.partitions) {
    for (const auto& n : other.nodes) {
      if (std::find(p->nodes.begin(), p->nodes.end(), n) != p->nodes.end()) {
        out.insert(other.name);
        break;
      }
    }
  }
  return out;
}

std::int64_t GpuCapacity(const cluster::Description& d, const std::string& partition,
                         const std::string& type) {
  const cluster::Partition* p = d.FindPartition(partition);
  if (p == nullptr) return 0;
  std::int64_t total = 0;
  for (const cluster::Node* n : d.NodesOf(*p)) {
    // A powered-down node of an elastic cluster runs jobs once booted.
    if (!n->usable() && !n->bootable()) continue;
    for (const auto& g : n->gres) {
      if (g.name == "gpu" && (type.empty() || g.type == type)) total += g.count;
    }
  }
  return total;
}

AdjustedEstimate AccountForPendingWork(const EstimateInput& in,
                                       const std::vector<cluster::QueuedJob>& queue,
                                       const catalog::AcceleratorCatalog& catalog) {
  AdjustedEstimate out;
  const std::time_t floor = std::max(in.now, in.test_only_start);
  out.start = floor;
  if (in.gpus <= 0 || in.capacity <= 0) return out;

  struct Use {
    std::time_t from, to;
    std::int64_t gpus;
  };
  std::vector<Use> uses;
  auto relevant = [&](const cluster::QueuedJob& j) {
    if (j.TotalGpus() <= 0) return false;
    // A job in several partitions ("a,b") counts when any of them shares nodes.
    bool shares = false;
    std::size_t start = 0;
    while (start <= j.partition.size()) {
      auto end = j.partition.find(',', start);
      if (end == std::string::npos) end = j.partition.size();
      if (in.partitions.contains(j.partition.substr(start, end - start))) shares = true;
      start = end + 1;
    }
    if (!shares) return false;
    return in.gpu_type.empty() || j.gpu_type.empty() || j.gpu_type == in.gpu_type ||
           catalog.Same(j.gpu_type, in.gpu_type);
  };
  std::time_t latest_end = floor;
  for (const auto& j : queue) {
    // Holding GPUs (the probe's squeue lists pending and running jobs only).
    if (!relevant(j) || !backend::HasNodes(backend::SlurmPhaseOf(j.state))) continue;
    const std::time_t end = j.end_time > 0 ? j.end_time : j.start_time + j.time_limit_minutes * 60;
    if (end <= in.now) continue;
    uses.push_back({in.now, end, j.TotalGpus()});
    latest_end = std::max(latest_end, end);
  }
  for (const auto& j : queue) {
    // Waiting to start; a held job waits for whoever holds it, not for GPUs.
    if (!relevant(j) || backend::SlurmPhaseOf(j.state) != backend::JobPhase::kPending) continue;
    // Held by its user or an admin (priority 0): it starts when released,
    // never ahead of a job that can start.
    if (j.reason == "JobHeldUser" || j.reason == "JobHeldAdmin") continue;
    const std::int64_t minutes = j.time_limit_minutes > 0 ? j.time_limit_minutes : in.minutes;
    // Without a backfill estimate, assume it starts once the running work ends.
    const std::time_t from = j.start_time > 0 ? std::max(j.start_time, in.now) : latest_end;
    // A pending array's tasks all wait for the same GPUs.
    uses.push_back({from, from + minutes * 60, j.TotalGpus() * j.tasks});
    out.pending_ahead += static_cast<int>(j.tasks);
    out.pending_gpus += j.TotalGpus() * j.tasks;
  }
  auto free_during = [&](std::time_t from, std::time_t to) {
    // The least free capacity over [from, to): check at `from` and at every
    // use that starts inside the window.
    std::int64_t least = in.capacity;
    std::vector<std::time_t> points = {from};
    for (const auto& u : uses) {
      if (u.from > from && u.from < to) points.push_back(u.from);
    }
    for (std::time_t t : points) {
      std::int64_t used = 0;
      for (const auto& u : uses) {
        if (u.from <= t && t < u.to) used += u.gpus;
      }
      least = std::min(least, in.capacity - used);
    }
    return least;
  };
  std::vector<std::time_t> candidates = {floor};
  for (const auto& u : uses) {
    if (u.to > floor) candidates.push_back(u.to);
  }
  std::sort(candidates.begin(), candidates.end());
  const std::time_t duration = in.minutes * 60;
  for (std::time_t t : candidates) {
    if (free_during(t, t + duration) >= in.gpus) {
      out.start = t;
      out.moved = t > floor;
      return out;
    }
  }
  return out;  // more than the partition will ever have free: Slurm's answer stands
}

}  // namespace skyslurm::place
