// What the `skyslurm` subcommands share: the configuration, the clusters,
// a backend for each live one, gathered once per command.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/config/settings.h"
#include "broker/place/workspace.h"

namespace skyslurm::cli {

using place::Workspace;

// Loads the configuration (with the command line's settings flags) and sets
// up every configured cluster (place::OpenWorkspace). `loaded`: the
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
