// The `skyslurm` command: the user's view over every cluster. Usage errors
// and bad input exit 2.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>

#include "broker/config/settings.h"
#include "broker/place/planner.h"
#include "shim/cli/check_command.h"
#include "shim/cli/cluster_views.h"
#include "shim/cli/cost_command.h"
#include "shim/cli/dashboard_command.h"
#include "shim/cli/describe_command.h"
#include "shim/cli/explain_command.h"
#include "shim/cli/gpus_command.h"
#include "shim/cli/jobs_commands.h"
#include "shim/cli/launch_command.h"
#include "shim/cli/login_command.h"
#include "shim/cli/site_command.h"
#include "shim/cli/sync_command.h"
#include "shim/route/route_command.h"
#include "skyslurm/version.h"

namespace {

namespace cli = skyslurm::cli;

// A subcommand and what runs it once parsed; its options live in the run's
// closure.
struct Subcommand {
  CLI::App* app;
  std::function<int()> run;
};

// explain [--yaml task.yaml | sbatch's options and script]: with --yaml, the
// task's batch script, as launch --dryrun shows it.
Subcommand AddExplain(CLI::App& app) {
  CLI::App* explain = app.add_subcommand(
      "explain", "Show a job as each cluster would run it, or why it cannot (submits nothing)");
  explain->prefix_command();  // sbatch's own options follow, unparsed here
  explain->set_help_flag();
  return {explain, [explain] {
            const std::vector<std::string> rest = explain->remaining();
            if (rest.empty() || (rest[0] != "--yaml" && !rest[0].starts_with("--yaml="))) {
              return cli::RunExplain(rest);
            }
            cli::LaunchOptions as_task;
            as_task.dryrun = true;
            if (rest[0] == "--yaml" && rest.size() == 2) {
              as_task.task_file = rest[1];
            } else if (rest[0].starts_with("--yaml=") && rest.size() == 1) {
              as_task.task_file = rest[0].substr(7);
            } else {
              std::fputs("usage: skyslurm explain --yaml task.yaml\n", stderr);
              return 2;
            }
            return cli::RunLaunch(as_task);
          }};
}

Subcommand AddLaunch(CLI::App& app) {
  CLI::App* launch = app.add_subcommand(
      "launch", "Run a SkyPilot task YAML where it starts first (a managed sky job)");
  auto o = std::make_shared<cli::LaunchOptions>();
  launch->add_option("task", o->task_file, "The task's YAML file")->required();
  launch->add_option("-n,--name", o->name, "The job's name (the task's name)");
  launch->add_option("--gpus", o->gpus,
                     "Accelerators per node in place of the task's: H100:8 (A100:8,H100:8: any)");
  launch->add_option("--infra", o->infra,
                     "Where: slurm/<cluster>[/<partition>], k8s[/<context>], a cloud (aws...)");
  launch->add_option("--num-nodes", o->num_nodes, "Nodes in place of the task's")
      ->check(CLI::PositiveNumber);
  launch->add_option("--env", o->env, "NAME=value (or NAME: its value here)")
      ->allow_extra_args(false);
  launch
      ->add_option("--secret", o->secrets,
                   "NAME=value (or NAME): in the job's environment, never in its script")
      ->allow_extra_args(false);
  launch->add_flag("--dryrun", o->dryrun,
                   "Print the batch script and how each cluster would run it; submit nothing");
  launch->add_flag("-d,--detach-run", o->detach_run,
                   "Return once submitted, without following its logs");
  return {launch, [o] { return cli::RunLaunch(*o); }};
}

Subcommand AddExport(CLI::App& app) {
  CLI::App* export_cmd =
      app.add_subcommand("export", "Write the SkyPilot task YAML equivalent to an sbatch script");
  auto o = std::make_shared<std::pair<std::string, std::string>>();  // script, output
  export_cmd->add_option("script", o->first, "The sbatch script")->required();
  export_cmd->add_option("-o,--output", o->second, "Write it there (default: stdout)");
  return {export_cmd, [o] { return cli::RunExport(o->first, o->second); }};
}

Subcommand AddDescribe(CLI::App& app) {
  CLI::App* describe = app.add_subcommand(
      "describe", "Print clusters' descriptions (partitions, GPUs, modules) as YAML");
  auto clusters = std::make_shared<std::vector<std::string>>();
  describe->add_option("clusters", *clusters, "Clusters to describe (default: all)");
  return {describe, [clusters] { return cli::RunDescribe(*clusters); }};
}

// A subcommand whose only option is --json.
Subcommand AddWithJson(CLI::App& app, const std::string& name, const std::string& help,
                       std::function<int(bool)> run) {
  CLI::App* sub = app.add_subcommand(name, help);
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print JSON");
  return {sub, [json, run = std::move(run)] { return run(*json); }};
}

Subcommand AddQueue(CLI::App& app) {
  auto expand = std::make_shared<bool>(false);
  Subcommand queue = AddWithJson(app, "queue", "Your jobs on every cluster, in one table",
                                 [expand](bool json) { return cli::RunQueue(json, *expand); });
  queue.app->add_flag("--expand", *expand,
                      "A spread array's parts each on a line (one per cluster)");
  return queue;
}

Subcommand AddLogin(CLI::App& app, const std::string& name, const std::string& help,
                    std::function<int(const std::string&)> run) {
  CLI::App* sub = app.add_subcommand(name, help);
  auto cluster = std::make_shared<std::string>();
  sub->add_option("cluster", *cluster, "The cluster (its Host in ~/.slurm/config)")->required();
  return {sub, [cluster, run = std::move(run)] { return run(*cluster); }};
}

Subcommand AddSite(CLI::App& app) {
  CLI::App* site = app.add_subcommand("site", "The site's skyslurmd (docs/site.md)");
  site->require_subcommand(1);
  site->add_subcommand("adopt",
                       "Move the jobs of your own skyslurmd into the site's, then stop using it");
  return {site, [site] {
            if (site->got_subcommand("adopt")) return cli::RunSiteAdopt();
            return 2;
          }};
}

Subcommand AddCancel(CLI::App& app) {
  CLI::App* cancel = app.add_subcommand(
      "cancel", "Cancel jobs: a sky id, the job id sbatch printed, or cluster:jobid");
  auto ids = std::make_shared<std::vector<std::string>>();
  cancel
      ->add_option("ids", *ids,
                   "sky-..., sky-..._[7,9-12] (tasks), the id sbatch printed (805306445, "
                   "805306445_7) or cluster:jobid")
      ->required();
  return {cancel, [ids] { return cli::RunCancel(*ids); }};
}

Subcommand AddLogs(CLI::App& app) {
  CLI::App* logs = app.add_subcommand("logs", "A job's output, from whichever cluster it runs on");
  auto id = std::make_shared<std::string>();
  auto follow = std::make_shared<bool>(false);
  logs->add_option("id", *id,
                   "sky-..., sky-..._7 (one task), the id sbatch printed or cluster:jobid")
      ->required();
  logs->add_flag("-f,--follow", *follow, "Keep printing until the job ends");
  return {logs, [id, follow] { return cli::RunLogs(*id, *follow); }};
}

Subcommand AddStatus(CLI::App& app) {
  auto id = std::make_shared<std::string>();
  Subcommand status = AddWithJson(app, "status", "A job's state, placement history and reasons",
                                  [id](bool json) { return cli::RunStatus(*id, json); });
  status.app->add_option("id", *id, "sky-..., the id sbatch printed or cluster:jobid")->required();
  return status;
}

Subcommand AddCost(CLI::App& app) {
  CLI::App* cost =
      app.add_subcommand("cost", "What elastic clusters billed, per cluster, and your share of it");
  auto since = std::make_shared<std::string>("month");
  auto json = std::make_shared<bool>(false);
  cost->add_option("--since", *since,
                   "month (default), today, 7d, 24h, or a UTC date/time (2026-12-01)");
  cost->add_flag("--json", *json, "Print JSON");
  return {cost, [since, json] { return cli::RunCost(*since, *json); }};
}

Subcommand AddSyncDown(CLI::App& app) {
  CLI::App* sync_down = app.add_subcommand(
      "sync-down", "Fetch a job's folder from the cluster it ran on (rsync; nothing here deleted)");
  auto o = std::make_shared<std::pair<std::string, std::string>>();  // id, destination
  sync_down->add_option("id", o->first, "sky-..., the id sbatch printed or cluster:jobid")
      ->required();
  sync_down->add_option("dest", o->second,
                        "where to put it (default: the folder the job was submitted from)");
  return {sync_down, [o] { return cli::RunSyncDown(o->first, o->second); }};
}

Subcommand AddDashboard(CLI::App& app) {
  CLI::App* dashboard = app.add_subcommand(
      "dashboard", "Serve the dashboard (clusters, GPUs, jobs) on 127.0.0.1 and print its link");
  auto o = std::make_shared<cli::DashboardOptions>();
  dashboard->add_option("--port", o->port, "The port (default: a free one)")
      ->check(CLI::Range(0, 65535));
  dashboard->add_flag("--no-browser", o->no_browser,
                      "Only print the link (its last line), open no browser");
  dashboard->add_flag("--stop", o->stop, "Stop serving it");
  return {dashboard, [o] { return cli::RunDashboard(*o); }};
}

// Every setting with a flag in the key table (docs/configuration.md).
void AddSettingFlags(CLI::App& app, std::map<std::string, std::string>& values) {
  for (const auto& key : skyslurm::config::SettingKeys()) {
    if (key.flag.empty()) continue;
    const std::string name(key.key);
    app.add_option_function<std::string>(
           std::string(key.flag), [&values, name](const std::string& v) { values[name] = v; },
           std::string(key.help))
        ->type_name("VALUE");
  }
}

int Main(int argc, char** argv) {
  // The shim's front hands routed invocations here: skyslurm __route MODE ARGS...
  if (argc >= 3 && std::string_view(argv[1]) == "__route") {
    return skyslurm::route::RunRoute(argv[2], std::vector<std::string>(argv + 3, argv + argc));
  }
  // ... and squeue/sacct/scontrol/scancel of routed jobs when no daemon
  // answered them: skyslurm __slurm TOOL ARGS...
  if (argc >= 3 && std::string_view(argv[1]) == "__slurm") {
    return skyslurm::route::RunClient(argv[2], std::vector<std::string>(argv + 3, argv + argc));
  }
  CLI::App app{"skyslurm: run Slurm jobs on whichever cluster starts them first", "skyslurm"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("-V,--version", version, "Print the version and exit");
  app.footer(
      "Submit as usual with sbatch/salloc/srun; add --sky-any-cluster to route a job.\n"
      "Run 'skyslurm COMMAND --help' for a command's options.");
  std::map<std::string, std::string> setting_values;
  AddSettingFlags(app, setting_values);
  const std::vector<Subcommand> subcommands = {
      AddExplain(app),
      AddLaunch(app),
      AddExport(app),
      AddDescribe(app),
      AddWithJson(app, "gpus", "GPUs over every cluster: total, free now, pending demand",
                  cli::RunGpus),
      {app.add_subcommand("check",
                          "Whether each cluster answers, and if not why and how to fix it"),
       cli::RunCheck},
      AddLogin(app, "login",
               "Open a session to a cluster whose bastion asks for a one-time code (asked once "
               "here; from stdin when it is not a terminal), for session_lifetime",
               [](const std::string& cluster) { return cli::RunLogin(cluster); }),
      AddLogin(app, "logout", "Close the session skyslurm login opened", cli::RunLogout),
      AddQueue(app),
      AddCancel(app),
      AddLogs(app),
      AddStatus(app),
      AddCost(app),
      AddSyncDown(app),
      AddDashboard(app),
      AddSite(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  cli::GlobalSettingFlags() = setting_values;
  if (version) {
    std::printf("skyslurm %s (built against Slurm %s)\n", skyslurm::kVersion,
                skyslurm::kSlurmBuildVersion);
    return 0;
  }
  for (const Subcommand& sub : subcommands) {
    if (sub.app->parsed()) return sub.run();
  }
  std::fputs(app.help().c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Run by ssh as SSH_ASKPASS during `skyslurm login` (login_command.h).
  if (skyslurm::cli::RunAsAskpass()) return 0;
  const int rc = Main(argc, argv);
  if (skyslurm::place::TasksStillRunning() > 0) {
    // A probe of a cluster that did not answer in time still runs in libssh:
    // leave without running the libraries' exit handlers under it.
    std::fflush(nullptr);
    _exit(rc);
  }
  return rc;
}
