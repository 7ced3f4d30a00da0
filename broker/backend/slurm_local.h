// A Slurm cluster whose controller is reached from this machine: the home
// cluster (its SLURM_CONF), or a peer named with `slurm_conf` in the settings.
#pragma once

#include <memory>

#include "broker/backend/slurm_backend.h"

namespace skyslurm::backend {

class SlurmLocalBackend final : public SlurmBackend {
 public:
  // `slurm_conf` empty: the environment's own; `slurm_bin_dir` empty: PATH.
  SlurmLocalBackend(std::string name, std::string slurm_conf, std::string modulepath,
                    std::string slurm_bin_dir = "");

 private:
  static std::vector<std::pair<std::string, std::string>> Env(const std::string& slurm_conf);
  LocalCommandRunner runner_;
};

}  // namespace skyslurm::backend
