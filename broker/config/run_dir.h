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

}  // namespace skyslurm::config
