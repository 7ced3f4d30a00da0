#include "shim/cli/cluster_views.h"

#include <fmt/format.h>

namespace skyslurm::cli {

std::map<std::string, std::string>& GlobalSettingFlags() {
  static std::map<std::string, std::string> flags;
  return flags;
}

Result<Workspace> OpenWorkspace(const std::vector<std::string>& description_files,
                                const std::map<std::string, std::string>& flags) {
  Workspace ws;
  ws.env = config::Environment::FromProcess();
  std::map<std::string, std::string> all = GlobalSettingFlags();
  for (const auto& [k, v] : flags) all[k] = v;
  SKY_ASSIGN_OR_RETURN(ws.config, config::LoadConfig(ws.env, all));
  SKY_ASSIGN_OR_RETURN(ws.catalog, ws.config.settings.Catalog());

  std::vector<cluster::Description> offline;
  for (const auto& file : description_files) {
    SKY_ASSIGN_OR_RETURN(cluster::Description d, cluster::ReadDescriptionFile(file));
    offline.push_back(std::move(d));
  }
  if (!offline.empty()) {
    // Offline: the clusters are exactly the files given.
    config::LoadedConfig only = ws.config;
    only.ssh_hosts.clear();
    only.settings.clusters.clear();
    if (only.settings.home.empty()) only.settings.home = offline.front().name;
    for (std::size_t i = 0; i < offline.size(); ++i) {
      config::ClusterSettings cs = ws.config.settings.For(offline[i].name);
      cs.description = description_files[i];
      only.settings.clusters[offline[i].name] = cs;
    }
    SKY_ASSIGN_OR_RETURN(ws.registry, cluster::ClusterRegistry::FromConfig(only, ws.env));
  } else {
    SKY_ASSIGN_OR_RETURN(ws.registry, cluster::ClusterRegistry::FromConfig(ws.config, ws.env));
  }
  for (const auto& entry : ws.registry.clusters()) {
    ClusterView view;
    view.entry = &entry;
    if (!ws.config.settings.Allowed(entry.name)) {
      view.unavailable = "excluded by clusters_allowed/clusters_denied";
      view.denied = true;
    } else if (entry.access == cluster::ClusterEntry::Access::kSsh) {
      view.unavailable = entry.ssh ? "reached over SSH (the SSH backend is not part of this build)"
                                   : "not in ~/.slurm/config and no slurm_conf or description "
                                     "in skyslurm.yaml";
    } else {
      auto d = cluster::DescribeLocal(entry, ws.local);
      if (d.ok()) {
        view.description = std::move(*d);
      } else {
        view.unavailable = d.status().message();
      }
    }
    ws.views.push_back(std::move(view));
  }
  return ws;
}

}  // namespace skyslurm::cli
