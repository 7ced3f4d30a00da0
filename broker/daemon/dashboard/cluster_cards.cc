#include "broker/daemon/dashboard/cluster_cards.h"

#include <algorithm>
#include <map>

#include "broker/place/elastic.h"

namespace skyslurm::daemon {

std::string NodeStateBucket(const cluster::Node& node) {
  const std::string& s = node.state;
  auto has = [&](std::string_view w) { return s.find(w) != std::string::npos; };
  // The flags first: they say more than the base state they ride on.
  if (has("POWERING_UP") || has("#")) return "booting";
  if (has("POWERED_DOWN") || has("POWER_DOWN") || has("POWERING_DOWN")) return "powered_down";
  if (has("DRAIN") || has("drain")) return "drained";
  const std::string base = s.substr(0, s.find('+'));
  if (base == "idle") return "idle";
  if (base == "mixed" || base == "mix") return "mixed";
  if (base == "allocated" || base == "alloc" || base == "completing") return "allocated";
  if (base == "down" || has("NOT_RESPONDING") || has("FAIL")) return "down";
  return s.empty() ? "unknown" : "other";
}

ClusterCard MakeClusterCard(const place::ClusterHandle& handle, const cluster::Inventory* inventory,
                            const catalog::AcceleratorCatalog& catalog,
                            const std::vector<cloud::PowerUp>* ledger) {
  ClusterCard card;
  card.name = handle.name;
  card.home = handle.home;
  card.kind = handle.caps.kind;
  if (inventory == nullptr) return card;
  card.probed = true;
  const cluster::Description& d = inventory->description;
  card.gpus = cluster::GpuTable(*inventory, catalog);
  for (const cluster::Node& n : d.nodes) ++card.nodes[NodeStateBucket(n)];
  bool elastic = false;
  for (const cluster::Partition& p : d.partitions) {
    if (p.hidden) continue;
    PartitionSummary s{p.name, p.is_default, 0, 0, p.state};
    for (const cluster::Node* n : d.NodesOf(p)) {
      ++s.nodes;
      for (const cluster::Gres& g : n->gres) {
        if (g.name == "gpu") s.gpus += g.count;
      }
    }
    card.partitions.push_back(s);
    const place::ElasticFacts facts = place::ElasticFactsOf(handle.settings, d, p.name, ledger);
    if (facts.elastic && !elastic) {
      elastic = true;
      card.boot_seconds = facts.boot_seconds;
      card.boot_basis = facts.boot_basis;
      card.price_per_gpu_hour = facts.price;
    } else if (facts.elastic && facts.price &&
               (!card.price_per_gpu_hour || *facts.price < *card.price_per_gpu_hour)) {
      card.price_per_gpu_hour = facts.price;  // the cheapest (a spot partition's)
    }
  }
  if (elastic && handle.caps.billing) {
    card.elastic = true;
    card.kind = "elastic";
  }
  // By node, not by partition row: a node in two partitions counts once.
  auto type_name = [&](const std::string& type) {
    return type.empty() ? std::string("GPU") : catalog.Canonical(type).value_or(type);
  };
  std::map<std::string, ClusterCard::TypeCount> by_type;
  for (const cluster::Node& n : d.nodes) {
    for (const cluster::Gres& g : n.gres) {
      if (g.name != "gpu") continue;
      std::int64_t used = 0;
      for (const cluster::Gres& u : n.gres_used) {
        if (u.name == "gpu" && u.type == g.type) used += u.count;
      }
      ClusterCard::TypeCount& t = by_type[type_name(g.type)];
      t.total += g.count;
      if (n.usable()) t.free += std::max<std::int64_t>(0, g.count - used);
    }
  }
  for (const cluster::QueuedJob& j : inventory->jobs) {
    if (j.phase != cluster::JobPhase::kPending) continue;
    const std::int64_t asked = j.TotalGpus() * j.tasks;
    card.pending_gpus += asked;
    // A job that names no type waits for whichever: counted in the
    // cluster's only type, or in none of several.
    if (!j.gpu_type.empty()) {
      if (auto t = by_type.find(type_name(j.gpu_type)); t != by_type.end())
        t->second.pending += asked;
    } else if (by_type.size() == 1) {
      by_type.begin()->second.pending += asked;
    }
  }
  for (auto& [type, t] : by_type) {
    t.type = type;
    card.total_gpus += t.total;
    card.free_gpus += t.free;
    card.gpu_types.push_back(t);
  }
  return card;
}

store::GpuSample GpuSampleOf(const ClusterCard& card, std::time_t now) {
  return {card.name, now, card.total_gpus, card.free_gpus, card.pending_gpus};
}

Json::Value ClusterCardJson(const ClusterCard& card, const std::string& currency) {
  Json::Value v(Json::objectValue);
  v["name"] = card.name;
  v["kind"] = card.kind;
  v["home"] = card.home;
  v["reachable"] = card.reachable;
  v["since"] = Json::Int64{card.since};
  v["answered"] = Json::Int64{card.answered};
  v["error"] = card.error;
  v["probed"] = card.probed;
  v["total_gpus"] = Json::Int64{card.total_gpus};
  v["free_gpus"] = Json::Int64{card.free_gpus};
  v["pending_gpus"] = Json::Int64{card.pending_gpus};
  v["gpu_types"] = Json::Value(Json::arrayValue);
  for (const ClusterCard::TypeCount& t : card.gpu_types) {
    Json::Value g(Json::objectValue);
    g["type"] = t.type;
    g["total"] = Json::Int64{t.total};
    g["free"] = Json::Int64{t.free};
    g["pending"] = Json::Int64{t.pending};
    v["gpu_types"].append(g);
  }
  v["gpus"] = Json::Value(Json::arrayValue);
  for (const cluster::GpuRow& row : card.gpus) {
    Json::Value g(Json::objectValue);
    g["partition"] = row.partition;
    g["type"] = row.type;
    g["canonical"] = row.canonical;
    g["total"] = Json::Int64{row.total};
    g["free"] = Json::Int64{row.free};
    g["pending_demand"] = Json::Int64{row.pending_demand};
    g["can_boot"] = Json::Int64{row.bootable};
    v["gpus"].append(g);
  }
  v["nodes"] = Json::Value(Json::objectValue);
  for (const auto& [state, n] : card.nodes) v["nodes"][state] = Json::Int64{n};
  v["partitions"] = Json::Value(Json::arrayValue);
  for (const PartitionSummary& p : card.partitions) {
    Json::Value pv(Json::objectValue);
    pv["name"] = p.name;
    pv["default"] = p.is_default;
    pv["nodes"] = Json::Int64{p.nodes};
    pv["gpus"] = Json::Int64{p.gpus};
    pv["state"] = p.state;
    v["partitions"].append(pv);
  }
  if (card.elastic) {
    Json::Value e(Json::objectValue);
    e["boot_seconds"] = card.boot_seconds;
    e["boot_basis"] = card.boot_basis;
    if (card.price_per_gpu_hour) e["price_per_gpu_hour"] = *card.price_per_gpu_hour;
    e["currency"] = currency;
    v["elastic"] = e;
  }
  return v;
}

}  // namespace skyslurm::daemon
