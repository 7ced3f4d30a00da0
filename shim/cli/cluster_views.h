// What the `skyslurm` subcommands share: the configuration, the clusters and
// their descriptions, gathered once per command.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "broker/catalog/accelerators.h"
#include "broker/cluster/description.h"
#include "broker/cluster/registry.h"
#include "broker/config/settings.h"
#include "broker/util/command.h"

namespace skyslurm::cli {

struct ClusterView {
  const cluster::ClusterEntry* entry = nullptr;
  std::optional<cluster::Description> description;
  std::string unavailable;  // why there is no description
  bool denied = false;      // excluded by policy (clusters_allowed/denied)
};

struct Workspace {
  config::Environment env;
  config::LoadedConfig config;
  cluster::ClusterRegistry registry;
  catalog::AcceleratorCatalog catalog;
  LocalCommandRunner local;
  std::vector<ClusterView> views;  // in registry order
};

// Loads the configuration and describes the clusters: every configured one,
// or only those in `description_files` (offline; the first file's cluster is
// home unless the settings name one).
// `flags` are the command line's settings (skyslurm --home=beta ...).
Result<Workspace> OpenWorkspace(const std::vector<std::string>& description_files,
                                const std::map<std::string, std::string>& flags = {});

// The settings flags every skyslurm command takes, filled by main().
std::map<std::string, std::string>& GlobalSettingFlags();

}  // namespace skyslurm::cli
