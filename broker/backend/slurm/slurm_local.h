// A Slurm cluster whose controller is reached from this machine: the home
// cluster (its SLURM_CONF), or a peer named with `slurm_conf` in the settings.
// With `access: rest` submissions and cancels go to slurmrestd processes this
// one starts as the user (local_rest.h): an HTTP request each, no sbatch
// started; a job slurmrestd cannot take as data, or a slurmrestd that cannot
// run here (as root it refuses), goes through sbatch, as without it.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "broker/backend/slurm/local_rest.h"
#include "broker/backend/slurm/slurm_backend.h"
#include "broker/site/run_as_runner.h"

namespace skyslurm::backend {

class SlurmLocalBackend final : public SlurmBackend {
 public:
  // `slurm_conf` empty: the environment's own; `slurm_bin_dir` empty: PATH.
  SlurmLocalBackend(std::string name, std::string slurm_conf, std::string modulepath,
                    std::string slurm_bin_dir = "");

  // Submissions and cancels through slurmrestd (access: rest); `program`
  // empty: the one found beside Slurm's commands (LocalRest::FindProgram).
  void UseRest(bool on, std::string program = "");
  // A site's daemon: every command runs as the user it acts for, through
  // `helper` (skyslurmd-runas; site/run_as_runner.h); slurmrestd, which
  // would act as the daemon's own user, is not used.
  void RunAsUsers(std::string helper);
  bool uses_rest() const { return rest_ != nullptr; }
  Result<JobKey> Submit(const SubmitSpec& spec, std::chrono::milliseconds timeout) override;
  Status Cancel(const std::string& job_id, bool only_if_pending,
                std::chrono::milliseconds timeout) override;
  // The controller, then slurmrestd when it is used.
  CheckAnswer Check(std::chrono::milliseconds timeout) override;
  // With access: rest, a slurmrestd offering no API skyslurm speaks rules
  // the cluster out first (RestSpoken), with that reason.
  Result<cluster::Inventory> Probe(std::chrono::milliseconds timeout) override;

  // What sbatch started here for `spec` would run with: the environment,
  // folder, host and umask (slurm_rest.h), for slurmrestd's request body.
  Result<LoginFacts> Facts(const SubmitSpec& spec) const;

 private:
  static std::vector<std::pair<std::string, std::string>> Env(const std::string& slurm_conf);
  RestAccess Rest();

  // Programs run here, or each as the user a site's daemon acts for.
  class Runner final : public CommandRunner {
   public:
    Result<CommandOutput> Run(const Command& command) override {
      return as_users ? as_users->Run(command) : local.Run(command);
    }
    std::vector<Result<CommandOutput>> RunAll(const std::vector<Command>& commands) override {
      return as_users ? as_users->RunAll(commands) : local.RunAll(commands);
    }
    LocalCommandRunner local;
    std::optional<site::RunAsRunner> as_users;
  };
  Runner runner_;
  std::string slurm_conf_;
  std::string slurm_bin_dir_;
  std::unique_ptr<LocalRest> rest_;
};

}  // namespace skyslurm::backend
