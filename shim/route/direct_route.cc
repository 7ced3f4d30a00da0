#include "shim/route/direct_route.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "broker/backend/backend.h"
#include "broker/config/login_session.h"
#include "broker/place/job_folder.h"
#include "broker/place/submission.h"
#include "broker/sync/rsync.h"
#include "broker/util/command.h"
#include "shim/route/wait_bound.h"

namespace skyslurm::route {
namespace {

namespace fs = std::filesystem;

// A command's steps of a submission: its folder measured, packed or copied
// by processes of its own, the copy's progress on the terminal, and where
// the job goes said before it goes (with what was sent).
class CommandSteps : public place::SubmissionSteps {
 public:
  CommandSteps(const DirectJob& job, const place::Submission& sub, Progress& progress, bool say)
      : job_(job), sub_(sub), progress_(progress), say_(say) {}

  Status CheckFolder(const sync::WorkdirPlan& folder, const std::string& cluster) override {
    return place::FolderFits(runner_, job_.ws, folder, cluster, kFolderTimeout);
  }
  Result<std::string> PackFolder(const sync::WorkdirPlan& folder,
                                 const std::string& cluster) override {
    return place::PackJobFolder(runner_, job_.ws, folder, cluster, kFolderTimeout);
  }
  Status BeforeSending(backend::SubmitSpec& spec) override {
    spec.first_attempt = true;  // made just now; Submit is not retried here
    return OkStatus();
  }
  Result<std::string> CopyFolder(const sync::WorkdirPlan& folder,
                                 const std::string& cluster) override {
    SKY_ASSIGN_OR_RETURN(sync::RsyncRemote remote, place::RemoteOf(job_.ws, cluster));
    const std::string doing = fmt::format(
        "copying {} to {}", sync::Tilde(folder.source, job_.ws.config.paths.home), cluster);
    progress_.Say(doing);
    auto sent = sync::Push(
        runner_, remote, folder.source, folder.dest, kFolderTimeout,
        [&](int percent) { progress_.Say(fmt::format("{}: {}%", doing, percent)); },
        folder.mode == sync::WorkdirMode::kPerJob);
    progress_.Clear();
    SKY_RETURN_IF_ERROR(sent.status());
    return sync::DescribeStats(*sent);
  }
  void Submitting(const backend::SubmitSpec& /*spec*/) override {
    if (say_) {
      std::fprintf(stderr, "%s: skyslurm: %s goes to cluster %s (%s); %s\n", job_.tool.c_str(),
                   job_.request.script_name.c_str(), job_.target.name.c_str(),
                   job_.plan.decision.summary.c_str(), sub_.FolderNote().c_str());
    }
    progress_.Say(fmt::format("submitting to {}", job_.target.name));
  }

 private:
  static constexpr std::chrono::minutes kFolderTimeout{10};
  const DirectJob& job_;
  const place::Submission& sub_;
  Progress& progress_;
  const bool say_;
  LocalCommandRunner runner_;
};

// --wait: the job waited for wherever it runs; the command exits as sbatch
// --wait does. A cluster that stops answering is waited for within a bound
// (wait_bound.h).
int WaitOnCluster(const DirectJob& job, const backend::JobKey& key,
                  const config::Settings& settings) {
  const std::string job_name = fmt::format("{}:{}", key.cluster, key.job_id);
  std::optional<std::int64_t> minutes = TimeLimitMinutes(job.request);
  if (!minutes) {  // the partition's own default, as the plan knows it
    const place::Candidate& chosen = job.plan.candidates[*job.plan.decision.chosen];
    const auto& inventory = job.plan.clusters[job.cluster_index].inventory;
    const cluster::Partition* p =
        inventory ? inventory->description.FindPartition(chosen.partition) : nullptr;
    if (p != nullptr) {
      minutes = p->default_time_minutes ? p->default_time_minutes : p->max_time_minutes;
    }
  }
  WaitBound bound(minutes, settings.failover.cluster_dead_after, std::time(nullptr));
  const std::time_t submitted = std::time(nullptr);
  while (true) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const std::time_t now = std::time(nullptr);
    auto jobs = job.target.backend->Jobs(std::chrono::seconds(10));
    if (!jobs.ok()) {
      if (auto error =
              bound.GiveUp(now, "cluster " + job.target.name, job_name,
                           "skyslurm queue shows it once " + job.target.name + " answers again")) {
        return Fail(job.tool, "skyslurm: " + *error + " (" + jobs.status().message() + ")");
      }
      continue;
    }
    bound.Answered(now);
    bool seen = false;
    for (const auto& j : *jobs) {
      if (j.key.job_id != key.job_id) continue;
      seen = true;
      if (!backend::IsFinal(j.phase)) break;
      // Slurm keeps a wait status: the exit code above 8 bits, a signal below.
      return WaitStatusExit(j.state, j.exit_code);
    }
    // Gone from the queue without an end seen (purged, MinJobAge passed).
    if (!seen && now - submitted > 10) {
      return Fail(job.tool, fmt::format("skyslurm: {} left the queue of {} unseen; how it ended "
                                        "is not known",
                                        job_name, job.target.name));
    }
  }
}

}  // namespace

int SubmitDirect(const DirectJob& job, const config::Environment& env, Progress& progress,
                 const config::Settings& settings) {
  // --wait is ours to do (wherever the job runs), and so are --quiet and
  // --parsable: the cluster's sbatch returns at once, saying the job id.
  const auto environment = env.vars();
  place::SubmissionContext context{.sky_id = job.sky_id, .env = &environment};
  for (const place::ClusterResult& c : job.plan.clusters) {
    if (c.name == job.target.name && c.inventory) context.description = &c.inventory->description;
  }
  place::Submission sub =
      place::PrepareSubmission(job.ws, job.target, job.request, *job.plan.chosen_job(), context,
                               fs::current_path().string());
  // A peer's job is said where it goes, unless its answer is all sbatch
  // prints (--parsable, --quiet) or nothing goes (--test-only).
  const bool say =
      !job.target.home && !job.request.parsable && !job.request.test_only && !job.quiet;
  CommandSteps steps(job, sub, progress, say);
  // --test-only submits nothing: nothing is sent for it either.
  const Status sent =
      place::Send(sub, job.target, steps,
                  {.timeout = std::chrono::seconds(30), .send_folder = !job.request.test_only});
  progress.Clear();
  if (!sent.ok()) {
    // The cluster's own refusal as it said it; anything before it is ours.
    return Fail(job.tool, sub.stage == place::Submission::Stage::kSubmit
                              ? sent.message()
                              : "skyslurm: " + sent.message());
  }
  const backend::JobKey& key = *sub.key;
  if (job.request.parsable) {
    std::printf("%s;%s\n", key.job_id.c_str(), key.cluster.c_str());
  } else if (!job.quiet) {
    std::printf("Submitted batch job %s on cluster %s\n", key.job_id.c_str(), key.cluster.c_str());
  }
  std::fflush(stdout);
  if (!job.request.wait) return 0;
  return WaitOnCluster(job, key, settings);
}

namespace {

// What runs there: the tool with the job's translated options and its
// command. salloc has no --export: the job's variables travel in the
// environment.
std::vector<std::string> InteractiveArgv(const DirectJob& job) {
  const translate::TranslatedJob& t = *job.plan.chosen_job();
  std::vector<std::string> argv = {job.tool};
  argv.insert(argv.end(), t.args.begin(), t.args.end());
  argv.insert(argv.end(), t.script_args.begin(), t.script_args.end());
  return argv;
}

// The ssh command that runs `argv` on the peer's login node. OpenSSH reads
// the user's own clusters file, so that every setting of it applies
// (ConnectTimeout, ServerAliveInterval, ProxyJump ...), as for `ssh -F
// ~/.slurm/config <cluster>` by hand; host keys are checked as skyslurm
// checks them (the file's StrictHostKeyChecking, default yes, where
// OpenSSH's own default would ask).
std::vector<std::string> SshCommand(const DirectJob& job, const config::SshHost& host,
                                    const std::vector<std::string>& argv) {
  const bool interactive = isatty(STDIN_FILENO) != 0;
  std::vector<std::string> ssh = {"ssh", "-F", job.ws.config.paths.clusters_file,
                                  interactive ? "-t" : "-T",
                                  // errors only: no "Connection to ... closed."
                                  "-o", "LogLevel=ERROR"};
  ssh.insert(ssh.end(), {"-o", "StrictHostKeyChecking=" + host.strict_host_key_checking});
  if (!interactive) ssh.insert(ssh.end(), {"-o", "BatchMode=yes"});  // no prompt nobody sees
  // Through the bastion's session while it holds (config/login_session.h);
  // without one, ssh follows the file's ProxyJump and asks on the terminal.
  const cluster::ClusterEntry* entry = job.ws.registry.Find(host.name);
  if (entry != nullptr && entry->session &&
      config::SessionUntil(*entry->session, std::chrono::system_clock::now())) {
    ssh.insert(ssh.end(), {"-o", "ProxyCommand=" + config::JumpCommandLine(*entry->session, true)});
  }
  ssh.push_back(host.name);
  std::string remote = "env -u SKYSLURM_ANY_CLUSTER " +
                       ShellQuote("SKYPILOT_TASK_ID=" + job.sky_id) + " " +
                       ShellQuote("SKYSLURM_CLUSTER=" + job.target.name) + " " + ShellJoin(argv);
  if (!job.target.settings.workdir.empty()) {
    remote = "cd " + ShellQuote(job.target.settings.workdir) + " && " + remote;
  }
  ssh.push_back(remote);
  return ssh;
}

}  // namespace

int RunInteractive(const DirectJob& job, const std::string& real) {
  // Home: the real command with the translated options. A peer: the same
  // through the user's ssh.
  const std::vector<std::string> argv = InteractiveArgv(job);
  if (job.target.home) {
    MarkRealCommand();
    setenv("SKYPILOT_TASK_ID", job.sky_id.c_str(), 1);
    setenv("SKYSLURM_CLUSTER", job.target.name.c_str(), 1);
    Exec(argv, real, false);
    return Fail(job.tool, fmt::format("skyslurm: cannot run {}: {}", real, std::strerror(errno)));
  }
  const cluster::ClusterEntry* entry = job.ws.registry.Find(job.target.name);
  if (entry == nullptr || !entry->ssh) {
    return Fail(job.tool, fmt::format("skyslurm: {} is not reached over SSH; cannot run {} there",
                                      job.target.name, job.tool));
  }
  if (!job.quiet) {
    std::fprintf(stderr, "%s: skyslurm: running on cluster %s (%s)\n", job.tool.c_str(),
                 job.target.name.c_str(), job.plan.decision.summary.c_str());
  }
  Exec(SshCommand(job, *entry->ssh, argv), "ssh", true);
  return Fail(job.tool, fmt::format("skyslurm: cannot run ssh: {}", std::strerror(errno)));
}

}  // namespace skyslurm::route
