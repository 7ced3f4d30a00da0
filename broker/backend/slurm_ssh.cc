#include "broker/backend/slurm_ssh.h"

namespace skyslurm::backend {

SlurmSshBackend::Parts SlurmSshBackend::Make(ssh::SshTarget target, ssh::PoolOptions options) {
  Parts p;
  p.pool = std::make_unique<ssh::SessionPool>(std::move(target), options);
  p.runner = std::make_unique<ssh::SshCommandRunner>(*p.pool);
  return p;
}

SlurmSshBackend::SlurmSshBackend(std::string name, ssh::SshTarget target, ssh::PoolOptions options)
    : SlurmSshBackend(std::move(name), Make(std::move(target), options)) {}

SlurmSshBackend::SlurmSshBackend(std::string name, Parts parts)
    : SlurmBackend(std::move(name), *parts.runner, {}), pool_(std::move(parts.pool)),
      runner_(std::move(parts.runner)) {}

}  // namespace skyslurm::backend
