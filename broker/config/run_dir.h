// Where a user's skyslurmd keeps its state and listens, from the environment
// alone: the shim finds the daemon's socket with it (standard library only)
// and so do skyslurm and skyslurmd (daemon_paths.h), so that they agree.
#pragma once

#include <optional>
#include <string>

namespace skyslurm::config {

// <$XDG_STATE_HOME, else <home>/.local/state>/skyslurm.
std::string StateDir(const std::optional<std::string>& xdg_state_home, const std::string& home);

// $XDG_RUNTIME_DIR/skyslurm when that folder exists, else <state_dir>/run.
std::string RunDir(const std::optional<std::string>& xdg_runtime_dir, const std::string& state_dir);

// The file that says a job was routed (daemon_paths.h), in the state folder.
inline std::string RoutedMarkerIn(const std::string& state_dir) { return state_dir + "/routed"; }

// The socket in a run folder.
inline std::string SocketIn(const std::string& run_dir) { return run_dir + "/skyslurmd.sock"; }

// Nothing is sent to a socket before both of these hold: another user who
// could make the folder (an XDG_RUNTIME_DIR they can write) or plant a
// socket would receive the job's environment, script and secrets.
//
// Why `dir` is not to be trusted with the daemon's socket: missing, not a
// folder (a link, a file), another user's, or open to others; nullopt when
// it is this user's own with mode 0700 (no group or other bits).
std::optional<std::string> PrivateDirProblem(const std::string& dir);
// Why the process at the other end of the connected UNIX socket `fd` is
// not this user (its SO_PEERCRED uid); nullopt when it is.
std::optional<std::string> PeerProblem(int fd);

}  // namespace skyslurm::config
