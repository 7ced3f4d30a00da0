// skyslurmd's log, as the other daemons a Slurm admin runs keep theirs:
// levels, the time to the millisecond, and size-based rotation when it goes
// to a file (spdlog). To stderr by default (systemd's journal); to a file with
// --log-file (the on-demand daemon: <state dir>/skyslurmd.log).
#pragma once

#include <cstddef>
#include <string>

#include "broker/util/status.h"

namespace skyslurm::daemon {

struct LogOptions {
  std::string level = "info";  // trace, debug, info, warning, error, critical, off
  std::string file;            // "" = stderr
  std::size_t max_bytes = 10 * 1024 * 1024;  // a file is rotated at this size
  std::size_t max_files = 5;                 // rotated files kept beside it
};

// Sets up the process's log; an unknown level or a file that cannot be
// opened is an error (and nothing changes).
Status SetUpLog(const LogOptions& options);

void LogInfo(const std::string& line);
void LogWarning(const std::string& line);
void LogError(const std::string& line);
void LogDebug(const std::string& line);

}  // namespace skyslurm::daemon
