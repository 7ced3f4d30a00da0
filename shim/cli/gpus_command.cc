#include "shim/cli/gpus_command.h"

#include <fmt/format.h>
#include <json/json.h>

#include <cstdio>
#include <optional>

#include "broker/cluster/inventory.h"
#include "broker/place/elastic.h"
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
  std::vector<place::ElasticFacts> facts;  // per row
  std::vector<std::string> releases;       // per row: its cluster's Slurm
  std::vector<std::pair<std::string, std::string>> unreachable;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (r.inventory) {
      const config::ClusterSettings& settings = ws->handles[i].settings;
      std::optional<std::vector<cloud::PowerUp>> ledger;
      if (!settings.ledger.empty()) {
        if (auto read = place::ReadLedger(settings.ledger); read.ok()) ledger = std::move(*read);
      }
      for (auto& row : cluster::GpuTable(*r.inventory, ws->catalog)) {
        facts.push_back(place::ElasticFactsOf(settings, r.inventory->description, row.partition,
                                              ledger ? &*ledger : nullptr));
        releases.push_back(r.inventory->description.slurm_version);
        rows.push_back(std::move(row));
      }
    } else if (!r.unreachable.empty()) {
      unreachable.emplace_back(r.name, r.unreachable);
    }
  }
  const std::string& currency = ws->policy.currency;
  if (json) {
    Json::Value root(Json::objectValue);
    root["gpus"] = Json::Value(Json::arrayValue);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const cluster::GpuRow& row = rows[i];
      Json::Value v;
      v["cluster"] = row.cluster;
      v["partition"] = row.partition;
      v["type"] = row.type;
      v["canonical"] = row.canonical;
      v["total"] = Json::Int64(row.total);
      v["free"] = Json::Int64(row.free);
      v["pending_demand"] = Json::Int64(row.pending_demand);
      if (!releases[i].empty()) v["slurm_release"] = releases[i];
      v["elastic"] = facts[i].elastic;
      if (facts[i].elastic) {
        v["can_boot"] = Json::Int64(row.bootable);
        v["boot_seconds"] = facts[i].boot_seconds;
        v["boot_basis"] = facts[i].boot_basis;
      }
      if (facts[i].price) v["price_per_gpu_hour"] = *facts[i].price;
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
    std::printf("%-10s %-14s %-10s %-24s %6s %6s %8s  %s\n", "CLUSTER", "PARTITION", "GPU", "TYPE",
                "TOTAL", "FREE", "PENDING", "SLURM");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const cluster::GpuRow& row = rows[i];
      std::printf("%-10s %-14s %-10s %-24s %6lld %6lld %8lld  %s\n", row.cluster.c_str(),
                  row.partition.c_str(), row.canonical.empty() ? "?" : row.canonical.c_str(),
                  row.type.empty() ? "(untyped)" : row.type.c_str(),
                  static_cast<long long>(row.total), static_cast<long long>(row.free),
                  static_cast<long long>(row.pending_demand),
                  releases[i].empty() ? "-" : releases[i].c_str());
    }
    for (const auto& [name, why] : unreachable) {
      std::printf("%-10s unreachable: %s\n", name.c_str(), why.c_str());
    }
    // Elastic capacity: what is up, what can boot, how long a boot takes
    // and what a GPU-hour costs there.
    bool any = false;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!facts[i].elastic) continue;
      if (!any) {
        std::printf("\n%-10s %-14s %6s %9s %8s %-16s %s\n", "ELASTIC", "PARTITION", "UP",
                    "CAN BOOT", "BOOT", "PRICE", "BOOT FROM");
        any = true;
      }
      const cluster::GpuRow& row = rows[i];
      const std::string price =
          facts[i].price ? place::FormatCost(*facts[i].price, currency) + "/GPU-h" : "-";
      std::printf("%-10s %-14s %6lld %9lld %6d s %-16s %s\n", row.cluster.c_str(),
                  row.partition.c_str(), static_cast<long long>(row.total - row.bootable),
                  static_cast<long long>(row.bootable), facts[i].boot_seconds, price.c_str(),
                  facts[i].boot_basis.c_str());
    }
  }
  return unreachable.empty() ? 0 : 1;
}

}  // namespace skyslurm::cli
