#include "broker/daemon/daemon_paths.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "broker/config/run_dir.h"

namespace skyslurm::daemon {

DaemonPaths ResolveDaemonPaths(const config::Environment& env, const config::Paths& paths) {
  DaemonPaths d;
  d.run_dir = config::RunDir(env.Get("XDG_RUNTIME_DIR"), paths.state_dir);
  d.socket = config::SocketIn(d.run_dir);
  // Beside the database, not the socket: $XDG_RUNTIME_DIR is per session
  // and per host, the state folder is the user's everywhere.
  d.lock = paths.state_dir + "/skyslurmd.lock";
  d.database = paths.state_dir + "/skyslurmd.db";
  d.routed_marker = config::RoutedMarkerIn(paths.state_dir);
  d.log = paths.state_dir + "/skyslurmd.log";
  d.stderr_file = paths.state_dir + "/skyslurmd.stderr";
  return d;
}

Status EnsurePrivateDir(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return UnavailableError(fmt::format("cannot create {}: {}", dir, std::strerror(errno)));
  }
  if (auto problem = config::PrivateDirProblem(dir)) {
    return PermissionDeniedError(*problem);
  }
  return OkStatus();
}

}  // namespace skyslurm::daemon
