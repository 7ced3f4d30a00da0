#include "broker/place/workspace.h"

#include <fmt/format.h>

#include "broker/backend/caching_backend.h"
#include "broker/backend/factory/factory.h"

namespace skyslurm::place {

ClusterHandle* Workspace::Find(const std::string& cluster) {
  for (auto& h : handles) {
    if (h.name == cluster) return &h;
  }
  return nullptr;
}

Result<Workspace> OpenWorkspace(config::Environment env, config::LoadedConfig config,
                                const std::vector<std::string>& description_files,
                                const std::string& slurm_bin_dir, backend::CacheOptions cache,
                                bool watch, const std::string& run_as_helper) {
  Workspace ws;
  ws.env = std::move(env);
  ws.config = std::move(config);
  SKY_ASSIGN_OR_RETURN(ws.catalog, ws.config.settings.Catalog());
  const config::ElasticPolicy& elastic = ws.config.settings.elastic;
  ws.policy.overflow_after = std::chrono::seconds(elastic.overflow_after);
  ws.policy.wait_worth = elastic.overflow_worth;
  ws.policy.currency = elastic.currency;
  ws.policy.tie_tolerance = std::chrono::seconds(ws.config.settings.tie_tolerance);
  ws.policy.run_times_from_history = ws.config.settings.run_times_from_history;
  switch (elastic.spot) {
    case config::SpotUse::kAllow:
      ws.policy.spot = SpotUse::kAllow;
      break;
    case config::SpotUse::kAvoid:
      ws.policy.spot = SpotUse::kAvoid;
      break;
    case config::SpotUse::kRequire:
      ws.policy.spot = SpotUse::kRequire;
      break;
  }

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
  static LocalCommandRunner exec_runner;  // kubeconfig exec credential plugins
  const backend::FactoryOptions factory{slurm_bin_dir,
                                        ws.config.paths.state_dir + "/cache",
                                        ws.config.paths.clusters_file,
                                        ws.env.Get("KUBECONFIG").value_or(""),
                                        ws.config.paths.home,
                                        &exec_runner,
                                        watch,
                                        run_as_helper};
  for (const auto& entry : ws.registry.clusters()) {
    ClusterHandle h;
    h.name = entry.name;
    h.home = entry.home;
    h.settings = ws.config.settings.For(entry.name);
    // %u: the user's login name there (~/.slurm/config's User), else here.
    const std::string login =
        entry.ssh && !entry.ssh->user.empty() ? entry.ssh->user : ws.config.paths.user;
    h.roots = translate::ExpandRoots(h.settings.paths, login);
    h.settings.workdir =
        translate::ExpandFolder(h.settings.workdir, login, entry.home ? ws.config.paths.home : "");
    h.login = login;
    h.rewrite_script_paths = ws.config.settings.rewrite_script_paths;
    if (!ws.config.settings.Allowed(entry.name)) {
      h.excluded = "excluded by clusters_allowed/clusters_denied";
    }
    backend::MadeCluster made = backend::MakeCluster(entry, h.settings, factory);
    h.translator = made.translator;
    h.caps = made.capabilities;
    h.offline = std::move(made.offline);
    h.unavailable = made.unavailable;
    if (made.backend != nullptr) {
      // The caching wrapper owns the backend it wraps (its deleter holds it).
      std::shared_ptr<backend::CachingBackend> caching(
          new backend::CachingBackend(*made.backend, cache),
          [inner = made.backend](backend::CachingBackend* b) { delete b; });
      h.backend = caching.get();
      h.backend_owner = caching;
      h.translator = caching;
      ws.caching.push_back(caching.get());
    } else {
      ws.caching.push_back(nullptr);
    }
    ws.handles.push_back(std::move(h));
  }
  return ws;
}

}  // namespace skyslurm::place
