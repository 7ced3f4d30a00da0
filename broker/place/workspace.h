// The clusters a command or skyslurmd works with: the configuration, and a
// backend for each live cluster (its controller directly, or its login node
// over SSH) or its description file, gathered once.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/backend/backend.h"
#include "broker/backend/caching_backend.h"
#include "broker/catalog/accelerators.h"
#include "broker/cluster/registry.h"
#include "broker/config/settings.h"
#include "broker/place/planner.h"

namespace skyslurm::place {

struct BudgetCache;  // spending.cc

struct Workspace {
  config::Environment env;
  config::LoadedConfig config;
  cluster::ClusterRegistry registry;
  catalog::AcceleratorCatalog catalog;
  // One per cluster, in registry order (home first), made by the backend
  // factory (factory.h); their backends are caching, rate-limited wrappers
  // (caching_backend.h), owned by their handles (backend_owner).
  std::vector<ClusterHandle> handles;
  std::vector<backend::CachingBackend*> caching;  // per handle: its backend, null when offline
  // The settings' placement policy (elastic clusters: overflow.after, spot).
  Policy policy;
  // Budgets' spend is read again at most this often (CacheBudgets):
  // skyslurmd, which places many jobs a poll, reads the bills once a poll; a
  // command reads them for its one placement (no cache).
  std::chrono::seconds budget_ttl{0};
  std::shared_ptr<BudgetCache> budget_cache;
  std::string home() const { return registry.home(); }
  // The handle of `cluster`, or null.
  ClusterHandle* Find(const std::string& cluster);
};

// Sets up every configured cluster of `config`. With `description_files`,
// only those clusters, offline (the first is home unless the settings name
// one). `slurm_bin_dir`: where the local cluster's real Slurm commands are
// (the router passes it so that it never runs a shim); "" = PATH.
// `cache`: how long probes are reused (a command: the default 30 s, one
// decision; skyslurmd, which reads every queue each poll: a few seconds).
// `run_as_helper`: a site's daemon's skyslurmd-runas, through which the
// local clusters' commands run as the user it acts for (factory's
// FactoryOptions::run_as_helper).
Result<Workspace> OpenWorkspace(config::Environment env, config::LoadedConfig config,
                                const std::vector<std::string>& description_files = {},
                                const std::string& slurm_bin_dir = "",
                                backend::CacheOptions cache = {}, bool watch = false,
                                const std::string& run_as_helper = "");

}  // namespace skyslurm::place
