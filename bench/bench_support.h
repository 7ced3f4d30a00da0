// What the benchmark programs share: timing, order statistics and the
// testbed's env file (scripts/testbed/up).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

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

}  // namespace skyslurm::bench
