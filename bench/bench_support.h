// What the benchmark programs share: timing, order statistics and the
// testbed's env file (scripts/testbed/up).
#pragma once

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "broker/util/command.h"

namespace skyslurm::bench {

using Clock = std::chrono::steady_clock;

inline double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The q-quantile (0..1) of the samples, nearest rank; 0 for none.
inline double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(rank, v.size() - 1)];
}
inline double Median(std::vector<double> v) { return Quantile(std::move(v), 0.5); }

// One program run and how long it took; a run that could not start has its
// reason as its stderr.
struct Timed {
  double ms = 0;
  CommandOutput out;
};
inline Timed TimeRun(CommandRunner& runner, const Command& c) {
  const auto t0 = Clock::now();
  auto r = runner.Run(c);
  Timed t{Ms(Clock::now() - t0), r.ok() ? *r : CommandOutput{}};
  if (!r.ok()) t.out.err = r.status().message();
  return t;
}

// What one process start costs on this machine (fork+exec of /bin/true,
// waited for; the mean of `n`): printed beside every figure, since machines
// of this project differ several-fold in it.
inline double ProcessStartMs(int n = 200) {
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    pid_t pid = 0;
    char arg0[] = "true";
    char* argv[] = {arg0, nullptr};
    if (posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, nullptr) != 0) return -1;
    int status = 0;
    waitpid(pid, &status, 0);
  }
  return Ms(Clock::now() - t0) / n;
}

// $SKYSLURM_TESTBED_DIR, default /tmp/skyslurm-testbed.
inline std::string TestbedDir() {
  const char* dir = std::getenv("SKYSLURM_TESTBED_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp/skyslurm-testbed";
}

// The `export NAME=value` lines of the testbed's env file.
inline std::map<std::string, std::string> ReadTestbedEnv(const std::string& dir) {
  std::map<std::string, std::string> env;
  std::ifstream in(dir + "/env");
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("export ")) continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    env[line.substr(7, eq - 7)] = line.substr(eq + 1);
  }
  return env;
}

// A copy of the ready user's home starts without skyslurmd state of its own;
// the daemon a routed sbatch starts there is stopped at the end.
inline void ForgetDaemonState(const std::string& home) {
  std::error_code ec;
  std::filesystem::remove_all(home + "/.local/state/skyslurm/run", ec);
  for (const char* f : {"skyslurmd.db", "skyslurmd.db-wal", "skyslurmd.db-shm", "skyslurmd.lock"}) {
    std::filesystem::remove(home + "/.local/state/skyslurm/" + f, ec);
  }
}
inline void StopDaemonOf(const std::string& home) {
  std::ifstream in(home + "/.local/state/skyslurm/skyslurmd.lock");
  int pid = 0;
  if (in >> pid && pid > 0) ::kill(pid, SIGTERM);
}

}  // namespace skyslurm::bench
