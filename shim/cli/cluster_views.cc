#include "shim/cli/cluster_views.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>


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
  namespace fs = std::filesystem;
  const fs::path dir = ws.config.paths.state_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  ::chmod(dir.c_str(), 0700);
  std::ofstream log(dir / "decisions.log", std::ios::app);
  if (!log) {
    std::fprintf(stderr, "skyslurm: warning: cannot write the audit log in %s\n", dir.c_str());
    return;
  }
  log << line << '\n';
}

}  // namespace skyslurm::cli
