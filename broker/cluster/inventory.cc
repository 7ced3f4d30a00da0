#include "broker/cluster/inventory.h"

#include <algorithm>
#include <map>

namespace skyslurm::cluster {

std::vector<GpuRow> GpuTable(const Inventory& inv, const catalog::AcceleratorCatalog& catalog) {
  std::vector<GpuRow> rows;
  const Description& d = inv.description;
  for (const Partition& p : d.partitions) {
    std::map<std::string, GpuRow> by_type;
    for (const Node* node : d.NodesOf(p)) {
      for (const Gres& g : node->gres) {
        if (g.name != "gpu") continue;
        GpuRow& row = by_type[g.type];
        row.total += g.count;
        if (node->bootable()) row.bootable += g.count;
        if (!node->usable()) continue;
        std::int64_t used = 0;
        for (const Gres& u : node->gres_used) {
          if (u.name == "gpu" && u.type == g.type) used += u.count;
        }
        row.free += std::max<std::int64_t>(0, g.count - used);
      }
    }
    for (auto& [type, row] : by_type) {
      row.cluster = d.name;
      row.partition = p.name;
      row.type = type;
      row.canonical = type.empty() ? "" : catalog.Canonical(type).value_or("");
      for (const QueuedJob& j : inv.jobs) {
        if (j.phase != JobPhase::kPending || j.partition.find(p.name) == std::string::npos) continue;
        const bool same = j.gpu_type.empty() ? by_type.size() == 1
                                             : (j.gpu_type == type || catalog.Same(j.gpu_type, type));
        if (same) row.pending_demand += j.TotalGpus() * j.tasks;
      }
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace skyslurm::cluster
