#include "broker/place/workspace.h"

#include <fmt/format.h>

#include "broker/backend/caching_backend.h"
#include "broker/backend/slurm_local.h"
#include "broker/backend/slurm_ssh.h"

namespace skyslurm::place {

ClusterHandle* Workspace::Find(const std::string& cluster) {
  for (auto& h : handles) {
    if (h.name == cluster) return &h;
  }
  return nullptr;
}

Result<Workspace> OpenWorkspace(config::Environment env, config::LoadedConfig config,
                                const std::vector<std::string>& description_files,
                                const std::string& slurm_bin_dir, backend::CacheOptions cache) {
  Workspace ws;
  ws.env = std::move(env);
  ws.config = std::move(config);
  SKY_ASSIGN_OR_RETURN(ws.catalog, ws.config.settings.Catalog());

  if (!description_files.empty()) {
    // Offline: the clusters are exactly the files given.
    config::LoadedConfig only = ws.config;
    only.ssh_hosts.clear();
    only.settings.clusters.clear();
    std::vector<cluster::Description> offline;
    for (const auto& file : description_files) {
      SKY_ASSIGN_OR_RETURN(cluster::Description d, cluster::ReadDescriptionFile(file));
      config::ClusterSettings cs = ws.config.settings.For(d.name);
      cs.description = file;
      only.settings.clusters[d.name] = cs;
      if (only.settings.home.empty()) only.settings.home = d.name;
    }
    SKY_ASSIGN_OR_RETURN(ws.registry, cluster::ClusterRegistry::FromConfig(only, ws.env));
  } else {
    SKY_ASSIGN_OR_RETURN(ws.registry, cluster::ClusterRegistry::FromConfig(ws.config, ws.env));
  }
  for (const auto& entry : ws.registry.clusters()) {
    ClusterHandle h;
    h.name = entry.name;
    h.home = entry.home;
    h.settings = ws.config.settings.For(entry.name);
    if (!ws.config.settings.Allowed(entry.name)) {
      h.excluded = "excluded by clusters_allowed/clusters_denied";
    }
    std::shared_ptr<backend::SlurmBackend> slurm;
    switch (entry.access) {
      case cluster::ClusterEntry::Access::kDescriptionFile: {
        auto d = cluster::ReadDescriptionFile(entry.description_file);
        if (d.ok()) {
          h.offline = std::move(*d);
        } else {
          h.unavailable = d.status().message();
        }
        break;
      }
      case cluster::ClusterEntry::Access::kLocal:
        slurm = std::make_shared<backend::SlurmLocalBackend>(entry.name, entry.slurm_conf,
                                                             entry.modulepath, slurm_bin_dir);
        break;
      case cluster::ClusterEntry::Access::kSsh:
        if (entry.ssh) {
          auto peer = std::make_shared<backend::SlurmSshBackend>(entry.name,
                                                                 ssh::TargetFromConfig(*entry.ssh));
          peer->UseRest(h.settings.access == "rest");
          slurm = peer;
        } else {
          h.unavailable = fmt::format(
              "{} is in skyslurm.yaml but not in {} (and has no slurm_conf or description)",
              entry.name, ws.config.paths.clusters_file);
        }
        break;
    }
    if (slurm != nullptr && h.unavailable.empty()) {
      slurm->CacheModules(ws.config.paths.state_dir + "/cache", std::chrono::hours(1));
      // The caching wrapper owns the backend it wraps (its deleter holds it).
      std::shared_ptr<backend::Backend> caching(new backend::CachingBackend(*slurm, cache),
                                                [inner = slurm](backend::Backend* b) { delete b; });
      h.backend = caching.get();
      h.backend_owner = caching;
      ws.slurm.push_back(slurm.get());
      ws.caching.push_back(static_cast<backend::CachingBackend*>(caching.get()));
    } else {
      ws.slurm.push_back(nullptr);
      ws.caching.push_back(nullptr);
    }
    ws.handles.push_back(std::move(h));
  }
  return ws;
}

}  // namespace skyslurm::place
