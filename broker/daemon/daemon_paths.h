// Where a user's skyslurmd listens and keeps its state. The socket sits in a
// folder only that user can enter (0700): $XDG_RUNTIME_DIR/skyslurm when the
// session has one, else <state dir>/run. The state database is
// <state dir>/skyslurmd.db, locked through <state dir>/skyslurmd.lock (which
// holds the daemon's PID), the daemon's log <state dir>/skyslurmd.log.
#pragma once

#include <string>

#include "broker/config/environment.h"
#include "broker/config/paths.h"
#include "broker/util/status.h"

namespace skyslurm::daemon {

struct DaemonPaths {
  std::string run_dir;
  std::string socket;    // run_dir/skyslurmd.sock
  std::string lock;      // state_dir/skyslurmd.lock: one daemon per database
  std::string database;  // state_dir/skyslurmd.db
  // state_dir/routed: made once a job was routed (the shims' squeue and
  // sacct then merge routed jobs in; before, they run the real command).
  std::string routed_marker;
  std::string log;       // state_dir/skyslurmd.log (rotated by size: .1.log, .2.log ...)
  // What the on-demand daemon prints outside its log (a crash report).
  std::string stderr_file;  // state_dir/skyslurmd.stderr
};

DaemonPaths ResolveDaemonPaths(const config::Environment& env, const config::Paths& paths);

// Creates `dir` (mode 0700) when missing; an existing folder must belong to
// this user and be closed to everyone else, or the answer says why not.
Status EnsurePrivateDir(const std::string& dir);

}  // namespace skyslurm::daemon
