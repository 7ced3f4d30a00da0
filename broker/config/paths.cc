#include "broker/config/paths.h"

#include <pwd.h>
#include <unistd.h>

#include "broker/config/run_dir.h"

namespace skyslurm::config {

std::string ExpandHome(const std::string& path, const std::string& home) {
  if (path == "~") return home;
  if (path.starts_with("~/")) return home + path.substr(1);
  return path;
}

Result<Paths> ResolvePaths(const Environment& env) {
  Paths paths;
  const passwd* pw = getpwuid(getuid());
  if (auto home = env.Get("HOME")) {
    paths.home = *home;
  } else if (pw != nullptr && pw->pw_dir != nullptr) {
    paths.home = pw->pw_dir;
  } else {
    return FailedPreconditionError(
        "cannot tell the home directory: HOME is not set and the password database has no entry "
        "for this user");
  }
  if (auto user = env.Get("USER")) {
    paths.user = *user;
  } else if (pw != nullptr && pw->pw_name != nullptr) {
    paths.user = pw->pw_name;
  }
  const std::string config_home = env.Get("XDG_CONFIG_HOME").value_or(paths.home + "/.config");
  paths.user_config = ExpandHome(
      env.Get("SKYSLURM_CONFIG").value_or(config_home + "/skyslurm/skyslurm.yaml"), paths.home);
  paths.site_config = ExpandHome(
      env.Get("SKYSLURM_SITE_CONFIG").value_or("/etc/skyslurm/skyslurm.yaml"), paths.home);
  paths.clusters_file = ExpandHome(
      env.Get("SKYSLURM_CLUSTERS_FILE").value_or(paths.home + "/.slurm/config"), paths.home);
  paths.state_dir = StateDir(env.Get("XDG_STATE_HOME"), paths.home);
  return paths;
}

}  // namespace skyslurm::config
