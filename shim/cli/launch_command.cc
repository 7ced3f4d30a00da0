#include "shim/cli/launch_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <variant>

#include "broker/backend/backend.h"
#include "broker/daemon/jobs/job_input.h"
#include "broker/job/request.h"
#include "broker/place/explain_view.h"
#include "broker/place/spending.h"
#include "broker/task/task_export.h"
#include "broker/task/task_script.h"
#include "broker/task/task_spec.h"
#include "shim/cli/cluster_views.h"
#include "shim/cli/daemon_client.h"
#include "shim/cli/jobs_commands.h"

namespace skyslurm::cli {
namespace {

namespace fs = std::filesystem;

int Bad(const std::string& message) {
  std::fprintf(stderr, "skyslurm launch: %s\n", message.c_str());
  return 2;
}

// The clusters as a task's infra names them.
std::vector<task::SiteCluster> SiteOf(const Workspace& ws) {
  std::vector<task::SiteCluster> site;
  for (const auto& h : ws.handles) {
    task::SiteCluster c;
    c.name = h.name;
    c.cloud = h.caps.skypilot_cloud;
    c.context = h.settings.context;
    c.elastic = h.settings.SaysElastic();
    c.spot_partitions = h.settings.spot;
    site.push_back(std::move(c));
  }
  return site;
}

// NAME=value, or NAME alone: its value here (SkyPilot's --env NAME).
Result<std::pair<std::string, std::string>> Assignment(const std::string& word,
                                                       std::string_view flag) {
  const auto eq = word.find('=');
  const std::string name = word.substr(0, eq);
  if (name.empty()) return InvalidArgumentError(fmt::format("{} {}: no name", flag, word));
  if (eq != std::string::npos) return std::pair(name, word.substr(eq + 1));
  const char* here = std::getenv(name.c_str());
  if (here == nullptr) {
    return InvalidArgumentError(
        fmt::format("{} {}: no value given, and {} is not set here", flag, word, name));
  }
  return std::pair(name, std::string(here));
}

// What messages call a task's batch script: "(task finetune.yaml)".
std::string StdinName(const std::string& task_file) {
  return fmt::format("(task {})", fs::path(task_file).filename().string());
}

// One way to run the task, weighed.
struct Weighed {
  const task::TaskJob* job = nullptr;
  job::Request request;
  place::Plan plan;
  bool can_run() const { return plan.decision.chosen.has_value(); }
  std::time_t start() const {
    const auto& s = plan.candidates[*plan.decision.chosen].start;
    return s ? *s : std::numeric_limits<std::time_t>::max();
  }
  std::string cluster() const { return plan.candidates[*plan.decision.chosen].cluster; }
};

// Ctrl-C while the logs are followed: the job goes on.
void StopFollowing(int) {
  static constexpr char kSaid[] =
      "\nskyslurm launch: stopped following; the job goes on (skyslurm logs -f, skyslurm cancel)\n";
  (void)!write(STDERR_FILENO, kSaid, sizeof kSaid - 1);
  _exit(0);
}

// The command line's changes to the task.
Result<task::TaskOverrides> OverridesOf(const LaunchOptions& o) {
  task::TaskOverrides overrides;
  overrides.name = o.name;
  overrides.gpus = o.gpus;
  overrides.infra = o.infra;
  overrides.num_nodes = o.num_nodes;
  for (const auto& e : o.env) {
    SKY_ASSIGN_OR_RETURN(auto kv, Assignment(e, "--env"));
    overrides.env.push_back(std::move(kv));
  }
  for (const auto& e : o.secrets) {
    SKY_ASSIGN_OR_RETURN(auto kv, Assignment(e, "--secret"));
    overrides.secrets.push_back(std::move(kv));
  }
  return overrides;
}

// Each way to run the task, its batch script parsed and planned.
Result<std::vector<Weighed>> WeighAll(const LaunchOptions& o, const task::TaskJobs& jobs,
                                      Workspace& ws) {
  std::vector<Weighed> weighed;
  for (const auto& alternative : jobs.alternatives) {
    job::RequestInput input;
    input.tool = job::Tool::kSbatch;
    input.env = ws.env.vars();
    input.script_text = alternative.script;
    input.stdin_name = StdinName(o.task_file);
    SKY_ASSIGN_OR_RETURN(job::Request request, job::ParseRequest(input));
    place::PlanOptions options;
    options.estimate = o.estimate;
    options.policy = place::PlacementPolicy(ws, options.probe_timeout);
    options.only = request.sky.clusters;
    if (request.sky.infra) options.pinned = *request.sky.infra;
    place::Plan plan = place::MakePlan(request, ws.handles, ws.catalog, ws.home(), options);
    weighed.push_back(
        {.job = &alternative, .request = std::move(request), .plan = std::move(plan)});
  }
  return weighed;
}

// --dryrun: each way's batch script and how each cluster would run it.
int PrintDryRun(const std::vector<Weighed>& weighed, const Workspace& ws, bool estimate) {
  bool any = false;
  for (const auto& w : weighed) {
    std::printf("=== %s: the batch script ===\n%s\n", w.job->label.c_str(), w.job->script.c_str());
    if (!w.job->secrets.empty()) {
      std::string names;
      for (const auto& [k, v] : w.job->secrets) names += (names.empty() ? "" : ", ") + k;
      std::printf("(secrets %s: given in the job's environment, not in its script)\n\n",
                  names.c_str());
    }
    std::printf("=== %s: on each cluster ===\n", w.job->label.c_str());
    const place::ExplainText view =
        place::RenderExplain(w.request, ws, w.plan, estimate, fs::current_path().string());
    std::fputs(view.text.c_str(), stdout);
    std::printf("\n");
    any = any || view.some_cluster_can_run_it;
  }
  return any ? 0 : 1;
}

// The first that can run (ordered), else the one that starts first; said
// beside the others when there are several. nullptr: none can run (said why).
const Weighed* Choose(const std::vector<Weighed>& weighed, bool ordered) {
  const Weighed* chosen = nullptr;
  for (const auto& w : weighed) {
    if (!w.can_run()) continue;
    if (chosen == nullptr || (!ordered && w.start() < chosen->start())) chosen = &w;
    if (ordered) break;
  }
  if (chosen == nullptr) {
    for (const auto& w : weighed) {
      std::fprintf(stderr, "skyslurm launch: %s: %s\n", w.job->label.c_str(),
                   place::NoClusterMessage(w.plan).c_str());
    }
    return nullptr;
  }
  if (weighed.size() > 1) {
    std::string others;
    for (const auto& w : weighed) {
      if (&w == chosen) continue;
      others += fmt::format(
          "; {}: {}", w.job->label,
          w.can_run() ? fmt::format("{} in {} s", w.cluster(),
                                    std::max<std::time_t>(0, w.start() - std::time(nullptr)))
                      : "no cluster");
    }
    std::fprintf(stderr, "skyslurm launch: %s %s (%s)%s\n", chosen->job->label.c_str(),
                 ordered ? "is the first that can run" : "starts first", chosen->cluster().c_str(),
                 others.c_str());
  }
  return chosen;
}

// Hands the chosen way to skyslurmd as a managed job, its secrets in its
// environment only; prints the job. Its sky id, or the exit code to leave with.
std::variant<std::string, int> Submit(DaemonClient& client, const Workspace& ws,
                                      const Weighed& chosen, const std::string& cwd,
                                      const LaunchOptions& o) {
  daemon::JobInput input{.tool = "sbatch",
                         .args = {},
                         .script = chosen.job->script,
                         .env = ws.env.vars(),
                         .cwd = cwd,
                         .at_terminal = isatty(STDOUT_FILENO) == 1,
                         .stdin_name = StdinName(o.task_file)};
  for (const auto& [k, v] : chosen.job->secrets) {
    input.env[k] = v;
    input.secret_names.push_back(k);
  }
  Json::Value body(Json::objectValue);
  body["sky_id"] = backend::NewSkyId(std::time(nullptr));
  body["input"] = daemon::ToJson(input);
  body["managed"] = true;
  auto answer = client.Post("/v1/jobs", body, std::chrono::minutes(11));
  if (!answer.ok()) {
    std::fprintf(stderr,
                 "skyslurm launch: %s; `skyslurm status %s` tells whether it was submitted\n",
                 answer.status().message().c_str(), body["sky_id"].asCString());
    return 1;
  }
  std::fputs((*answer)["stderr"].asCString(), stderr);
  if ((*answer)["exit_code"].asInt() != 0) return 1;
  const Json::Value& job = (*answer)["job"];
  std::string sky_id = job["sky_id"].asString();
  std::printf(
      "%s on %s (job %s; %s)\n", sky_id.c_str(), job["cluster"].asCString(),
      job["job_id"].isNull() ? job["native_id"].asCString() : job["job_id"].asString().c_str(),
      chosen.job->label.c_str());
  std::fflush(stdout);
  return sky_id;
}

// Follows the job's logs to its end; 0 when it completed.
int FollowToEnd(DaemonClient& client, const std::string& sky_id) {
  std::fprintf(stderr,
               "skyslurm launch: following its logs (Ctrl-C stops following; the job goes on)\n");
  std::signal(SIGINT, StopFollowing);
  if (const int rc = RunLogs(sky_id, true); rc != 0) return rc;
  std::signal(SIGINT, SIG_DFL);
  auto now = client.Get("/v1/jobs/" + sky_id);
  if (!now.ok()) return 1;
  const std::string state = (*now)["job"]["state"].asString();
  std::printf("%s: %s\n", sky_id.c_str(), state.c_str());
  return state == "COMPLETED" ? 0 : 1;
}

}  // namespace

int RunLaunch(const LaunchOptions& o) {
  std::ifstream in(o.task_file);
  if (!in) return Bad(fmt::format("cannot read {}", o.task_file));
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  auto task = task::ParseTask(text, o.task_file);
  if (!task.ok()) return Bad(task.status().message());
  auto overrides = OverridesOf(o);
  if (!overrides.ok()) return Bad(overrides.status().message());
  auto ws = OpenWorkspace({});
  if (!ws.ok()) return Bad(ws.status().message());
  const fs::path task_dir = fs::absolute(o.task_file).parent_path();
  auto jobs = task::TaskToJobs(*task, *overrides, SiteOf(*ws), ws->catalog, task_dir.string());
  if (!jobs.ok()) return Bad(jobs.status().message());
  for (const auto& note : jobs->notes)
    std::fprintf(stderr, "skyslurm launch: note: %s\n", note.c_str());
  // Submitted from its workdir, as `cd workdir && sbatch` would be: that
  // folder is what a peer gets a copy of.
  std::error_code ec;
  if (!jobs->workdir.empty()) fs::current_path(jobs->workdir, ec);
  if (ec) return Bad(fmt::format("cannot enter the workdir {}: {}", jobs->workdir, ec.message()));
  const std::string cwd = fs::current_path().string();

  auto weighed = WeighAll(o, *jobs, *ws);
  if (!weighed.ok()) return Bad(weighed.status().message());
  if (o.dryrun) return PrintDryRun(*weighed, *ws, o.estimate);
  const Weighed* chosen = Choose(*weighed, jobs->ordered);
  if (chosen == nullptr) return 1;

  auto loaded = config::LoadConfig(ws->env, GlobalSettingFlags());
  if (!loaded.ok()) return Bad(loaded.status().message());
  DaemonClient client(ws->env, *loaded);
  if (Status up = client.EnsureRunning(); !up.ok()) {
    std::fprintf(stderr, "skyslurm launch: %s\n", up.message().c_str());
    return 1;
  }
  const auto submitted = Submit(client, *ws, *chosen, cwd, o);
  if (const int* rc = std::get_if<int>(&submitted)) return *rc;
  if (o.detach_run) return 0;
  return FollowToEnd(client, std::get<std::string>(submitted));
}

int RunExport(const std::string& script, const std::string& output) {
  job::RequestInput input;
  input.tool = job::Tool::kSbatch;
  input.args = {script};
  input.env = config::Environment::FromProcess().vars();
  // The script's own options only: SBATCH_* of this shell are not the job's.
  std::erase_if(input.env, [](const auto& e) { return e.first.starts_with("SBATCH_"); });
  auto request = job::ParseRequest(input);
  if (!request.ok()) {
    std::fprintf(stderr, "skyslurm export: %s\n", request.status().message().c_str());
    return 2;
  }
  // The clusters, for how infra names them (nothing is asked of them).
  std::vector<task::SiteCluster> site;
  if (auto ws = OpenWorkspace({}); ws.ok()) site = SiteOf(*ws);
  auto exported = task::ExportTask(*request, site);
  if (!exported.ok()) {
    std::fprintf(stderr, "skyslurm export: %s\n", exported.status().message().c_str());
    return 1;
  }
  for (const auto& n : exported->not_carried) {
    std::fprintf(stderr, "skyslurm export: not carried over: %s\n", n.c_str());
  }
  if (output.empty() || output == "-") {
    std::fputs(exported->yaml.c_str(), stdout);
    return 0;
  }
  std::ofstream out(output);
  out << exported->yaml;
  if (!out) {
    std::fprintf(stderr, "skyslurm export: cannot write %s\n", output.c_str());
    return 2;
  }
  return 0;
}

}  // namespace skyslurm::cli
