// Slurm as a backend: the cluster's own commands (sinfo, squeue, scontrol,
// sbatch, scancel), run by a CommandRunner: directly for the home cluster
// (slurm_local.h), over the SSH pool for a peer (slurm_ssh.h). Scripts travel
// on stdin, never inside a command line a login shell reads (the agent's
// bash may: estimate_then_submit.h).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "broker/backend/backend.h"
#include "broker/backend/slurm/slurm_rest.h"
#include "broker/backend/slurm/slurm_translator.h"
#include "broker/util/command.h"

namespace skyslurm::backend {

class SlurmBackend : public Backend {
 public:
  // `env`: what every command runs with (SLURM_CONF for a local cluster).
  // `slurm_bin_dir`: where Slurm's commands are ("" = the runner's PATH);
  // the router sets it so that it never runs a skyslurm shim.
  SlurmBackend(std::string name, CommandRunner& runner,
               std::vector<std::pair<std::string, std::string>> env, std::string modulepath = "",
               std::string slurm_bin_dir = "");

  const std::string& name() const override { return name_; }
  Capabilities capabilities() const override;
  // translate::Translate: sbatch options respelled for the cluster.
  translate::Translation Translate(const job::Request& request, const cluster::Description& target,
                                   const translate::TranslateContext& context) const override;
  // As its translation said squeue lists it (TranslatedJob::queued).
  std::optional<cluster::QueuedJob> AsQueued(const SubmitSpec& spec,
                                             const JobKey& key) const override;
  Result<cluster::Inventory> Probe(std::chrono::milliseconds timeout) override;
  Result<StartEstimate> EstimateStart(const translate::TranslatedJob& job,
                                      std::chrono::milliseconds timeout) override;
  Result<JobKey> Submit(const SubmitSpec& spec, std::chrono::milliseconds timeout) override;
  Result<std::vector<JobInfo>> Queue(std::chrono::milliseconds timeout) override;
  Status Hold(const std::string& job_id, std::chrono::milliseconds timeout) override;
  Status Release(const std::string& job_id, std::chrono::milliseconds timeout) override;
  Status SetArrayThrottle(const std::string& job_id, std::int64_t limit,
                          std::chrono::milliseconds timeout) override;
  Status Cancel(const std::string& job_id, bool only_if_pending,
                std::chrono::milliseconds timeout) override;
  Result<std::string> Output(const std::string& job_id, std::chrono::milliseconds timeout) override;
  // Read where the file is (tail -c from the offset, head -c the most): the
  // log is never loaded whole, on the login node or here.
  Result<OutputPart> OutputFrom(const std::string& job_id, std::uint64_t offset,
                                std::size_t max_bytes, std::chrono::milliseconds timeout) override;
  Result<CommandOutput> RunClientCommand(
      const std::vector<std::string>& argv,
      const std::vector<std::pair<std::string, std::string>>& env,
      std::chrono::milliseconds timeout) override;
  // sacct: every user's jobs with nodes since then (slurm_accounting.h).
  Result<std::vector<cloud::NodeUse>> NodeUses(std::time_t since,
                                               std::chrono::milliseconds timeout) override;

  // Slurm's version on that cluster ("slurm-wlm 22.05.8"), then the probe.
  CheckAnswer Check(std::chrono::milliseconds timeout) override;
  Result<std::string> SlurmVersion(std::chrono::milliseconds timeout);

  // Module lists change rarely and listing them costs a login shell and
  // Lmod (150 ms and more): keep them in `dir`/<cluster>.modules for `ttl`.
  void CacheModules(std::string dir, std::chrono::seconds ttl);

 protected:
  // A command's result as an error when it could not run or failed, with
  // what it said.
  Result<CommandOutput> Checked(const std::string& program, Result<CommandOutput> out) const;
  // Slurm's commands by name, from slurm_bin_dir when set; and the
  // environment every command gets. `utc`: TZ=UTC for commands whose
  // printed times are read (not sbatch's submission, whose environment
  // becomes the job's).
  void Prepare(Command& command, bool utc = true) const;
  // sbatch --test-only for the job, prepared (the script on stdin), and
  // its answer read. It answers for any job: salloc's and srun's options
  // that sbatch does not take are left out (and the command, which becomes
  // a --wrap), and so are those that would silence or hold its answer.
  Command TestOnlyCommand(const translate::TranslatedJob& job) const;
  Result<StartEstimate> TestOnlyAnswer(Result<CommandOutput> out) const;
  // sbatch for the submission, not prepared, without its script: options
  // and the environment it runs with.
  Command SubmitCommand(const SubmitSpec& spec) const;
  // The job sbatch --parsable made, from what it printed (found by its
  // tag when it printed no id).
  Result<JobKey> SubmittedKey(const SubmitSpec& spec, const CommandOutput& out,
                              std::chrono::milliseconds timeout);

  // slurmrestd, however it is reached (over SSH: slurm_ssh.h; started here:
  // local_rest.h): one request, and whether it cannot run there (a request
  // it refused that way was never read).
  struct RestAccess {
    std::function<Result<ssh::HttpAnswer>(std::string_view method, std::string_view path,
                                          std::string_view body, std::chrono::milliseconds)>
        request;
    std::function<bool()> unavailable;
    // What sbatch would find where it runs (its environment, folder, host).
    std::function<Result<LoginFacts>(const SubmitSpec&, std::chrono::milliseconds)> facts;
  };
  // The submission through slurmrestd; through sbatch (once) when it cannot
  // run there or take the job as data, or made no job. Never through sbatch
  // when slurmrestd answers but speaks no API skyslurm knows: access: rest
  // is the site's choice of door (a token for the user, not a login), and a
  // door that cannot work rules the cluster out (RestSpoken) rather than
  // being walked around.
  Result<JobKey> SubmitThroughRest(const RestAccess& rest, const SubmitSpec& spec,
                                   std::chrono::milliseconds timeout);
  // The cancel through slurmrestd; scancel for what its DELETE cannot say.
  Status CancelThroughRest(const RestAccess& rest, const std::string& job_id, bool only_if_pending,
                           std::chrono::milliseconds timeout);
  // slurmrestd's Slurm release ("22.05.8") and the API spoken
  // ("v0.0.38"), from its ping. NotFound, saying why, when it offers no
  // version skyslurm speaks: then sbatch and scancel do its work.
  Result<std::string> PingRest(const RestAccess& rest, std::chrono::milliseconds timeout);
  // "/slurm/<version>": the newest OpenAPI version slurmrestd offers (its
  // /openapi/v3, read once) and skyslurm speaks; NotFound when none.
  Result<std::string> RestApi(const RestAccess& rest, std::chrono::milliseconds timeout);
  // FailedPrecondition, saying why, when slurmrestd answers and offers no
  // API skyslurm speaks: a probe of an access: rest cluster rules it out
  // with that reason. OK otherwise (a slurmrestd that cannot run there is
  // the submission's to meet: it falls back to sbatch).
  Status RestSpoken(const RestAccess& rest, std::chrono::milliseconds timeout);
  // skyslurm check's answer for a slurmrestd whose versions skyslurm does
  // not speak (`why`: PingRest's NotFound): the cluster is ruled out
  // (RestSpoken), and check says why and what to do.
  static CheckAnswer NoKnownRestApi(const Status& why);

 private:
  Result<CommandOutput> RunChecked(Command command, std::chrono::milliseconds timeout,
                                   bool utc = true);
  Result<std::vector<JobInfo>> JobsWithTag(const std::string& tag,
                                           std::chrono::milliseconds timeout);

  std::string name_;
  CommandRunner& runner_;
  std::vector<std::pair<std::string, std::string>> env_;
  std::string modulepath_;
  std::string slurm_bin_dir_;
  // What rarely changes (modules, plugin options, MaxArraySize, how to ask
  // sinfo), one file per cluster and kind in the cache folder: read while
  // fresh (false otherwise), and written.
  bool CachedLines(const std::string& kind, std::vector<std::string>* out) const;
  void KeepLines(const std::string& kind, const std::vector<std::string>& lines) const;
  std::mutex rest_api_mu_;
  std::optional<Result<std::string>> rest_api_;  // once read (not a failed request)
  std::string module_cache_dir_;
  std::chrono::seconds module_cache_ttl_{0};
};

// What every Slurm cluster offers (Capabilities' defaults are Slurm's).
Capabilities SlurmCapabilities();

// The options a job is submitted with (--parsable first, then the job's own
// but those of a terminal's sbatch: --wait, --quiet, --parsable; then
// skyslurm's: the tag in --comment, a default --job-name, --chdir,
// --no-requeue unless restartable, one --export: the job's own list with
// skyslurm's values appended, else bare ALL), the script on stdin.
std::vector<std::string> SbatchSubmitOptions(const SubmitSpec& spec);

// What sbatch's environment gets beside its own: skyslurm's values
// (export_env) unless the job's own --export lists variables (then they are
// in that list), and the values of the names it lists bare (export_values).
// Never a longer --export for them: sbatch takes any list for a request of
// the user's login environment (a `su -` per task on the node).
std::vector<std::pair<std::string, std::string>> SbatchSubmitEnvironment(const SubmitSpec& spec);

// "sbatch: Job 64 to start at 2026-11-30T04:39:25 using 1 processors on
// nodes gamma-n1 in partition batch" (times in UTC: commands run with TZ=UTC).
Result<StartEstimate> ParseTestOnly(std::string_view output);
// The StdOut= path of `scontrol -o show job`'s line, spaces in it included
// (it ends where the next " Key=" starts); "" when there is none.
std::string StdOutPathOf(std::string_view show_line);

}  // namespace skyslurm::backend
