// A Slurm cluster reached through its login node over SSH (libssh session
// pool; settings from ~/.slurm/config). With `access: rest` submissions and
// cancels go to slurmrestd, started as the user on the same connections
// (slurm_rest.h): an HTTP request each, no process started on either side;
// a job slurmrestd cannot take as data goes through sbatch, as without it.
#pragma once

#include <memory>
#include <mutex>
#include <optional>

#include "broker/backend/slurm/slurm_backend.h"
#include "broker/backend/slurm/slurm_rest.h"
#include "broker/ssh/session_pool.h"

namespace skyslurm::backend {

class SlurmSshBackend final : public SlurmBackend {
 public:
  SlurmSshBackend(std::string name, ssh::SshTarget target, ssh::PoolOptions options = {});

  ssh::SessionPool& pool() { return *pool_; }

  // Submissions and cancels through slurmrestd (access: rest).
  void UseRest(bool on) { rest_ = on; }
  bool uses_rest() const { return rest_; }
  // The login node first (its connection), then slurmrestd when it is used.
  CheckAnswer Check(std::chrono::milliseconds timeout) override;
  // With access: rest, a slurmrestd offering no API skyslurm speaks rules
  // the cluster out first (RestSpoken), with that reason.
  Result<cluster::Inventory> Probe(std::chrono::milliseconds timeout) override;
  Result<JobKey> Submit(const SubmitSpec& spec, std::chrono::milliseconds timeout) override;
  // One command through the agent (estimate_then_submit.h): one round trip
  // instead of two. Through slurmrestd, without agents (a channel's login
  // shell reads the line), for a retry (its tag is looked for first), a
  // script with arguments (staged in a file) or a script too long to be one
  // argument: estimate, then submit, as by default.
  EstimatedSubmission EstimateThenSubmit(const SubmitSpec& spec,
                                         std::chrono::milliseconds timeout) override;
  Status Cancel(const std::string& job_id, bool only_if_pending,
                std::chrono::milliseconds timeout) override;
  // slurmrestd's Slurm release and API ("22.05.8 (API v0.0.38)"), for skyslurm check.
  Result<std::string> RestPing(std::chrono::milliseconds timeout);

 private:
  // Constructed before the base (through the helper) so that the base's
  // runner reference is valid from the start.
  struct Parts {
    std::unique_ptr<ssh::SessionPool> pool;
    std::unique_ptr<ssh::SshCommandRunner> runner;
  };
  static Parts Make(ssh::SshTarget target, ssh::PoolOptions options);
  SlurmSshBackend(std::string name, Parts parts);

  // What sbatch would find on the login node, read once (slurm_rest.h).
  Result<LoginFacts> Login(std::chrono::milliseconds timeout);
  // slurmrestd on the login node, on the pool's connections.
  RestAccess Rest();

  std::unique_ptr<ssh::SessionPool> pool_;
  std::unique_ptr<ssh::SshCommandRunner> runner_;
  bool rest_ = false;
  std::mutex login_mu_;
  std::optional<LoginFacts> login_;
};

}  // namespace skyslurm::backend
