#include "shim/cli/cluster_views.h"

#include "broker/place/audit.h"


namespace skyslurm::cli {

std::map<std::string, std::string>& GlobalSettingFlags() {
  static std::map<std::string, std::string> flags;
  return flags;
}

Result<Workspace> OpenWorkspace(const std::vector<std::string>& description_files,
                                const std::string& slurm_bin_dir,
                                std::optional<config::LoadedConfig> loaded) {
  auto env = config::Environment::FromProcess();
  if (!loaded) {
    SKY_ASSIGN_OR_RETURN(loaded, config::LoadConfig(env, GlobalSettingFlags()));
  }
  return place::OpenWorkspace(std::move(env), std::move(*loaded), description_files,
                              slurm_bin_dir);
}

void AppendAudit(const Workspace& ws, const std::string& line) {
  place::AppendAudit(ws.config.paths.state_dir, line);
}

}  // namespace skyslurm::cli
