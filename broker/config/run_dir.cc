#include "broker/config/run_dir.h"

#include <sys/stat.h>

namespace skyslurm::config {

std::string StateDir(const std::optional<std::string>& xdg_state_home, const std::string& home) {
  return (xdg_state_home ? *xdg_state_home : home + "/.local/state") + "/skyslurm";
}

std::string RunDir(const std::optional<std::string>& xdg_runtime_dir,
                   const std::string& state_dir) {
  struct stat st {};
  if (xdg_runtime_dir && !xdg_runtime_dir->empty() && ::stat(xdg_runtime_dir->c_str(), &st) == 0 &&
      S_ISDIR(st.st_mode)) {
    return *xdg_runtime_dir + "/skyslurm";
  }
  return state_dir + "/run";
}

}  // namespace skyslurm::config
