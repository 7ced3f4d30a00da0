#include "broker/backend/kubernetes/start_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "broker/backend/kubernetes/inventory.h"

namespace skyslurm::kube {
namespace {

struct Room {
  std::string name;
  std::string gpu_type;
  std::int64_t gpus_total = 0;
  std::int64_t gpus_free = 0;
  std::int64_t millicores_free = 0;
  std::int64_t memory_free_mb = 0;
};

bool Takes(const Room& r, std::int64_t gpus, const std::string& type, std::int64_t millicores,
           std::int64_t memory_mb) {
  if (gpus > 0 && (r.gpus_free < gpus || (!type.empty() && r.gpu_type != type))) return false;
  return r.millicores_free >= millicores && r.memory_free_mb >= memory_mb;
}

// Places `pods` pods first fit (several may share a node); the nodes used,
// or nullopt with `rooms` untouched.
std::optional<std::vector<std::string>> Place(std::vector<Room>& rooms, const JobShape& s,
                                              std::int64_t millicores, std::int64_t memory_mb) {
  std::vector<Room> trial = rooms;
  std::vector<std::string> used;
  for (std::int64_t i = 0; i < s.pods; ++i) {
    bool placed = false;
    for (Room& r : trial) {
      if (!Takes(r, s.gpus_per_pod, s.gpu_type, millicores, memory_mb)) continue;
      r.gpus_free -= s.gpus_per_pod;
      r.millicores_free -= millicores;
      r.memory_free_mb -= memory_mb;
      used.push_back(r.name);
      placed = true;
      break;
    }
    if (!placed) return std::nullopt;
  }
  rooms = std::move(trial);
  return used;
}

}  // namespace

std::optional<ModelledStart> ModelStart(const JobShape& shape, const cluster::Inventory& inventory,
                                        std::time_t now, std::chrono::seconds assumed_runtime) {
  std::vector<Room> rooms;
  for (const auto& n : inventory.description.nodes) {
    if (!TakesPod(n, shape.gpus_per_pod > 0)) continue;
    Room r;
    r.name = n.name;
    for (const auto& g : n.gres) {
      if (g.name != "gpu") continue;
      r.gpu_type = g.type;
      r.gpus_total += g.count;
    }
    std::int64_t used = 0;
    for (const auto& g : n.gres_used) used += g.name == "gpu" ? g.count : 0;
    r.gpus_free = std::max<std::int64_t>(0, r.gpus_total - used);
    r.millicores_free = std::max<std::int64_t>(0, (n.cpus - n.alloc_cpus) * 1000);
    r.memory_free_mb = std::max<std::int64_t>(0, n.memory_mb - n.alloc_memory_mb);
    rooms.push_back(std::move(r));
  }
  // Could it ever fit, with every node empty?
  {
    std::vector<Room> empty = rooms;
    for (Room& r : empty) r.gpus_free = r.gpus_total;
    if (!Place(empty, shape, 0, 0)) return std::nullopt;
  }
  // Pods pending ahead, in creation order: each takes its share when it
  // fits (and pods that can never fit are no one's obstacle).
  // (A record of a job just submitted stands for all its pods.)
  std::vector<const cluster::QueuedJob*> ahead;
  for (const auto& j : inventory.jobs) {
    if (j.phase != cluster::JobPhase::kPending || j.gpus_per_node <= 0) continue;
    for (std::int64_t i = 0; i < std::max<std::int64_t>(1, j.nodes); ++i) ahead.push_back(&j);
  }
  std::stable_sort(ahead.begin(), ahead.end(),
                   [](auto* a, auto* b) { return a->submit_time < b->submit_time; });
  auto admit_ahead = [&](std::vector<Room>& rs) {
    for (auto it = ahead.begin(); it != ahead.end();) {
      bool placed = false;
      for (Room& r : rs) {
        if (Takes(r, (*it)->gpus_per_node, (*it)->gpu_type, 0, 0)) {
          r.gpus_free -= (*it)->gpus_per_node;
          placed = true;
          break;
        }
      }
      it = placed ? ahead.erase(it) : it + 1;
    }
  };
  admit_ahead(rooms);
  const int pending = static_cast<int>(ahead.size());
  if (auto nodes = Place(rooms, shape, shape.millicores, shape.memory_mb)) {
    return ModelledStart{now, *nodes, "free nodes now"};
  }
  // Running pods' ends, earliest first.
  struct End {
    std::time_t at;
    std::string node;
    std::int64_t gpus;
    bool assumed;
  };
  std::vector<End> ends;
  for (const auto& j : inventory.jobs) {
    if (j.phase != cluster::JobPhase::kRunning || j.nodelist.empty()) continue;
    const std::time_t started = j.start_time != 0 ? j.start_time : now;
    const bool known = j.time_limit_minutes > 0;
    const std::time_t at =
        known ? started + j.time_limit_minutes * 60 : started + assumed_runtime.count();
    ends.push_back({std::max(at, now), j.nodelist, j.gpus_per_node, !known});
  }
  std::sort(ends.begin(), ends.end(), [](const End& a, const End& b) { return a.at < b.at; });
  bool assumed = false;
  for (const End& e : ends) {
    for (Room& r : rooms) {
      if (r.name == e.node) r.gpus_free = std::min(r.gpus_total, r.gpus_free + e.gpus);
    }
    assumed = assumed || e.assumed;
    admit_ahead(rooms);
    // CPUs and memory as free now: the model frees GPUs only.
    if (auto nodes = Place(rooms, shape, 0, 0)) {
      return ModelledStart{
          e.at, *nodes,
          fmt::format("running pods' deadlines{}{}",
                      assumed ? fmt::format(" (those without one assumed to end within {} min)",
                                            assumed_runtime.count() / 60)
                              : "",
                      pending > 0 ? fmt::format(", after {} pending pod(s) ahead", pending) : "")};
    }
  }
  return std::nullopt;
}

}  // namespace skyslurm::kube
