#include "shim/cli/gpus_command.h"

#include <fmt/format.h>
#include <json/json.h>

#include <cstdio>

#include "broker/cluster/inventory.h"
#include "broker/place/planner.h"
#include "shim/cli/cluster_views.h"

namespace skyslurm::cli {

int RunGpus(bool json) {
  auto ws = OpenWorkspace({});
  if (!ws.ok()) {
    std::fprintf(stderr, "skyslurm gpus: %s\n", ws.status().message().c_str());
    return 2;
  }
  const auto results = place::ProbeAll(ws->handles, std::chrono::seconds(15));
  std::vector<cluster::GpuRow> rows;
  std::vector<std::pair<std::string, std::string>> unreachable;
  for (const auto& r : results) {
    if (r.inventory) {
      for (auto& row : cluster::GpuTable(*r.inventory, ws->catalog)) rows.push_back(std::move(row));
    } else if (!r.unreachable.empty()) {
      unreachable.emplace_back(r.name, r.unreachable);
    }
  }
  if (json) {
    Json::Value root(Json::objectValue);
    root["gpus"] = Json::Value(Json::arrayValue);
    for (const auto& row : rows) {
      Json::Value v;
      v["cluster"] = row.cluster;
      v["partition"] = row.partition;
      v["type"] = row.type;
      v["canonical"] = row.canonical;
      v["total"] = Json::Int64(row.total);
      v["free"] = Json::Int64(row.free);
      v["pending_demand"] = Json::Int64(row.pending_demand);
      root["gpus"].append(v);
    }
    root["unreachable"] = Json::Value(Json::arrayValue);
    for (const auto& [name, why] : unreachable) {
      Json::Value v;
      v["cluster"] = name;
      v["reason"] = why;
      root["unreachable"].append(v);
    }
    Json::StreamWriterBuilder w;
    w["indentation"] = "  ";
    std::printf("%s\n", Json::writeString(w, root).c_str());
  } else {
    std::printf("%-10s %-14s %-10s %-24s %6s %6s %8s\n", "CLUSTER", "PARTITION", "GPU", "TYPE",
                "TOTAL", "FREE", "PENDING");
    for (const auto& row : rows) {
      std::printf("%-10s %-14s %-10s %-24s %6lld %6lld %8lld\n", row.cluster.c_str(),
                  row.partition.c_str(), row.canonical.empty() ? "?" : row.canonical.c_str(),
                  row.type.empty() ? "(untyped)" : row.type.c_str(),
                  static_cast<long long>(row.total), static_cast<long long>(row.free),
                  static_cast<long long>(row.pending_demand));
    }
    for (const auto& [name, why] : unreachable) {
      std::printf("%-10s unreachable: %s\n", name.c_str(), why.c_str());
    }
  }
  return unreachable.empty() ? 0 : 1;
}

}  // namespace skyslurm::cli
