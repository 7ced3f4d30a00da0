#pragma once

// Starting a program on pipes: the one place that sets up posix_spawn for
// the broker (commands run to completion, slurmrestd processes kept open).

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm {

// A file descriptor closed when its owner goes.
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  OwnedFd(OwnedFd&& other) noexcept : fd_(other.Release()) {}
  OwnedFd& operator=(OwnedFd&& other) noexcept;
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  ~OwnedFd() { Close(); }

  int get() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  void Close();
  // Hands the descriptor over; this one then owns none.
  int Release();

 private:
  int fd_ = -1;
};

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  std::vector<std::string> env;   // "NAME=value", the program's whole environment
  std::string cwd;                // empty: ours
  bool stdin_piped = true;        // false: the program reads /dev/null
};

// A started program and our ends of its pipes, non-blocking.
struct SpawnedProcess {
  pid_t pid = -1;
  OwnedFd in;   // its stdin (not open when it reads /dev/null)
  OwnedFd out;  // its stdout
  OwnedFd err;  // its stderr
};

// Starts request.argv in a process group of its own (so a timeout can stop
// what it started too), with an empty signal mask and default dispositions
// whatever this process blocks or ignores, and none of our descriptors but
// its three pipes. A program that could not be started is an error saying
// "cannot run <program>: <why>" (NotFound when there is no such program,
// PermissionDenied when it may not be run); pipes that could not be made
// (no descriptors left) an Internal one saying "cannot create pipes ...".
Result<SpawnedProcess> Spawn(const SpawnRequest& request);

// This process's environment without the names in `unset`, then with each
// name of `set` given its value (a later one wins), sorted by name.
std::vector<std::string> EnvironmentWith(
    const std::vector<std::pair<std::string, std::string>>& set,
    const std::vector<std::string>& unset = {});

}  // namespace skyslurm
