// A Slurm cluster reached through its login node over SSH (libssh session
// pool; settings from ~/.slurm/config).
#pragma once

#include <memory>

#include "broker/backend/slurm_backend.h"
#include "broker/ssh/session_pool.h"

namespace skyslurm::backend {

class SlurmSshBackend final : public SlurmBackend {
 public:
  SlurmSshBackend(std::string name, ssh::SshTarget target, ssh::PoolOptions options = {});

  ssh::SessionPool& pool() { return *pool_; }

 private:
  // Constructed before the base (through the helper) so that the base's
  // runner reference is valid from the start.
  struct Parts {
    std::unique_ptr<ssh::SessionPool> pool;
    std::unique_ptr<ssh::SshCommandRunner> runner;
  };
  static Parts Make(ssh::SshTarget target, ssh::PoolOptions options);
  SlurmSshBackend(std::string name, Parts parts);

  std::unique_ptr<ssh::SessionPool> pool_;
  std::unique_ptr<ssh::SshCommandRunner> runner_;
};

}  // namespace skyslurm::backend
