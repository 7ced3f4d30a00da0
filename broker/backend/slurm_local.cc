#include "broker/backend/slurm_local.h"

namespace skyslurm::backend {

std::vector<std::pair<std::string, std::string>> SlurmLocalBackend::Env(const std::string& conf) {
  if (conf.empty()) return {};
  return {{"SLURM_CONF", conf}};
}

// runner_ is a member initialized after the base: the base only stores the
// reference, and uses it once construction is complete.
SlurmLocalBackend::SlurmLocalBackend(std::string name, std::string slurm_conf,
                                     std::string modulepath, std::string slurm_bin_dir)
    : SlurmBackend(std::move(name), runner_, Env(slurm_conf), std::move(modulepath),
                   std::move(slurm_bin_dir)) {}

}  // namespace skyslurm::backend
