#include "broker/daemon/daemon_paths.h"

#include "broker/config/run_dir.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

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
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    return UnavailableError(fmt::format("cannot read {}: {}", dir, std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) return FailedPreconditionError(fmt::format("{} is not a folder", dir));
  if (st.st_uid != ::geteuid()) {
    return PermissionDeniedError(
        fmt::format("{} belongs to uid {}, not to this user (uid {}); refusing to use it", dir,
                    st.st_uid, ::geteuid()));
  }
  if ((st.st_mode & 077) != 0) {
    return PermissionDeniedError(fmt::format(
        "{} can be entered by others (mode {:04o}); refusing to use it: make it private "
        "(chmod 700 {}) or remove it",
        dir, st.st_mode & 07777, dir));
  }
  return OkStatus();
}

}  // namespace skyslurm::daemon
