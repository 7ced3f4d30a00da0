// What the `skyslurm` subcommands share: the configuration, the clusters,
// a backend for each live one, gathered once per command.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/backend/backend.h"
#include "broker/backend/slurm_backend.h"
#include "broker/catalog/accelerators.h"
#include "broker/cluster/registry.h"
#include "broker/config/settings.h"
#include "broker/place/planner.h"

namespace skyslurm::cli {

struct Workspace {
  config::Environment env;
  config::LoadedConfig config;
  cluster::ClusterRegistry registry;
  catalog::AcceleratorCatalog catalog;
  std::vector<std::unique_ptr<backend::Backend>> backends;
  // One per cluster, in registry order (home first); their backends are
  // caching, rate-limited wrappers (caching_backend.h) of `slurm`'s.
  std::vector<place::ClusterHandle> handles;
  std::vector<backend::SlurmBackend*> slurm;  // per handle, null when offline
  std::string home() const { return registry.home(); }
};

// Loads the configuration and sets up every configured cluster: a backend
// for each live one (its controller directly, or its login node over SSH),
// or its description file. With `description_files`, only those clusters,
// offline (the first is home unless the settings name one).
// `slurm_bin_dir`: where the local cluster's real Slurm commands are (the
// router passes it so that it never runs a shim); "" = PATH. `loaded`: the
// configuration when the caller has loaded it already.
Result<Workspace> OpenWorkspace(const std::vector<std::string>& description_files,
                                const std::string& slurm_bin_dir = "",
                                std::optional<config::LoadedConfig> loaded = std::nullopt);

// The settings flags every skyslurm command takes, filled by main().
std::map<std::string, std::string>& GlobalSettingFlags();

// Writes one line to the audit log under the user's state dir
// (decisions.log); failures to write are reported on stderr, never fatal.
void AppendAudit(const Workspace& ws, const std::string& line);

}  // namespace skyslurm::cli
