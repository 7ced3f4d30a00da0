// Where skyslurm's files are, for the user running it. Everything is
// derived from the environment given (HOME, then the password database;
// XDG_CONFIG_HOME, XDG_STATE_HOME; SKYSLURM_CONFIG names the user config,
// SKYSLURM_SITE_CONFIG the site one, SKYSLURM_CLUSTERS_FILE the cluster list),
// so tests never read the machine's /etc or the real home.
#pragma once

#include <string>

#include "broker/config/environment.h"
#include "broker/util/status.h"

namespace skyslurm::config {

struct Paths {
  std::string home;           // $HOME, else the password database's
  std::string user;           // the user's name
  std::string user_config;    // ~/.config/skyslurm/skyslurm.yaml
  std::string site_config;    // /etc/skyslurm/skyslurm.yaml
  std::string clusters_file;  // ~/.slurm/config
  std::string state_dir;      // ~/.local/state/skyslurm
};

Result<Paths> ResolvePaths(const Environment& env);

// "~" or "~/x" expanded against `home`; other paths unchanged.
std::string ExpandHome(const std::string& path, const std::string& home);

}  // namespace skyslurm::config
