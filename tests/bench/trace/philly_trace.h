// The trace file the issue-18 proofs replay, for the tests that read one.
#pragma once

#include <cstdlib>
#include <filesystem>

namespace skyslurm::trace {

// The traces' folder is $SKYSLURM_TRACES, else ../shared/traces beside the
// project (SKYSLURM_SOURCE_DIR); the file is Philly's virtual cluster
// 6214e9. Tests skip when it is absent.
inline std::filesystem::path PhillyTrace() {
  const char* env = std::getenv("SKYSLURM_TRACES");
  const std::filesystem::path dir =
      env != nullptr && *env != '\0'
          ? std::filesystem::path(env)
          : std::filesystem::path(SKYSLURM_SOURCE_DIR) / ".." / "shared" / "traces";
  return dir / "philly" / "by_vc" / "jobs_6214e9.csv";
}

}  // namespace skyslurm::trace
