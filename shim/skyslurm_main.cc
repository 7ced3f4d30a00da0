// The `skyslurm` command: the user's view over every cluster. Usage errors
// and bad input exit 2.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>

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
#include "shim/cli/sync_command.h"
#include "shim/route/route_command.h"
#include "skyslurm/version.h"

namespace {

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

  // Every setting with a flag in the key table (docs/configuration.md).
  std::map<std::string, std::string> setting_values;
  for (const auto& key : skyslurm::config::SettingKeys()) {
    if (key.flag.empty()) continue;
    const std::string name(key.key);
    app.add_option_function<std::string>(
           std::string(key.flag),
           [&setting_values, name](const std::string& v) { setting_values[name] = v; },
           std::string(key.help))
        ->type_name("VALUE");
  }

  CLI::App* explain = app.add_subcommand(
      "explain", "Show a job as each cluster would run it, or why it cannot (submits nothing)");
  explain->prefix_command();  // sbatch's own options follow, unparsed here
  explain->set_help_flag();
  CLI::App* launch = app.add_subcommand(
      "launch", "Run a SkyPilot task YAML where it starts first (a managed sky job)");
  skyslurm::cli::LaunchOptions launch_options;
  launch->add_option("task", launch_options.task_file, "The task's YAML file")->required();
  launch->add_option("-n,--name", launch_options.name, "The job's name (the task's name)");
  launch->add_option("--gpus", launch_options.gpus,
                     "Accelerators per node in place of the task's: H100:8 (A100:8,H100:8: any)");
  launch->add_option("--infra", launch_options.infra,
                     "Where: slurm/<cluster>[/<partition>], k8s[/<context>], a cloud (aws...)");
  launch->add_option("--num-nodes", launch_options.num_nodes, "Nodes in place of the task's")
      ->check(CLI::PositiveNumber);
  launch->add_option("--env", launch_options.env, "NAME=value (or NAME: its value here)")
      ->allow_extra_args(false);
  launch
      ->add_option("--secret", launch_options.secrets,
                   "NAME=value (or NAME): in the job's environment, never in its script")
      ->allow_extra_args(false);
  launch->add_flag("--dryrun", launch_options.dryrun,
                   "Print the batch script and how each cluster would run it; submit nothing");
  launch->add_flag("-d,--detach-run", launch_options.detach_run,
                   "Return once submitted, without following its logs");
  CLI::App* export_cmd =
      app.add_subcommand("export", "Write the SkyPilot task YAML equivalent to an sbatch script");
  std::string export_script, export_output;
  export_cmd->add_option("script", export_script, "The sbatch script")->required();
  export_cmd->add_option("-o,--output", export_output, "Write it there (default: stdout)");
  CLI::App* describe =
      app.add_subcommand("describe", "Print clusters' descriptions (partitions, GPUs, modules) as YAML");
  std::vector<std::string> describe_clusters;
  describe->add_option("clusters", describe_clusters, "Clusters to describe (default: all)");
  CLI::App* gpus = app.add_subcommand("gpus", "GPUs over every cluster: total, free now, pending demand");
  bool gpus_json = false;
  gpus->add_flag("--json", gpus_json, "Print JSON");
  CLI::App* check = app.add_subcommand(
      "check", "Whether each cluster answers, and if not why and how to fix it");

  CLI::App* queue = app.add_subcommand("queue", "Your jobs on every cluster, in one table");
  bool queue_json = false;
  queue->add_flag("--json", queue_json, "Print JSON");
  bool queue_expand = false;
  queue->add_flag("--expand", queue_expand,
                  "A spread array's parts each on a line (one per cluster)");
  CLI::App* cancel = app.add_subcommand(
      "cancel", "Cancel jobs: a sky id, the job id sbatch printed, or cluster:jobid");
  std::vector<std::string> cancel_ids;
  cancel
      ->add_option("ids", cancel_ids,
                   "sky-..., sky-..._[7,9-12] (tasks), the id sbatch printed (805306445, "
                   "805306445_7) or cluster:jobid")
      ->required();
  CLI::App* logs = app.add_subcommand("logs", "A job's output, from whichever cluster it runs on");
  std::string logs_id;
  bool logs_follow = false;
  logs->add_option("id", logs_id,
                   "sky-..., sky-..._7 (one task), the id sbatch printed or cluster:jobid")
      ->required();
  logs->add_flag("-f,--follow", logs_follow, "Keep printing until the job ends");
  CLI::App* status = app.add_subcommand("status", "A job's state, placement history and reasons");
  std::string status_id;
  bool status_json = false;
  status->add_option("id", status_id, "sky-..., the id sbatch printed or cluster:jobid")
      ->required();
  status->add_flag("--json", status_json, "Print JSON");

  CLI::App* cost =
      app.add_subcommand("cost", "What elastic clusters billed, per cluster, and your share of it");
  std::string cost_since = "month";
  bool cost_json = false;
  cost->add_option("--since", cost_since,
                   "month (default), today, 7d, 24h, or a UTC date/time (2026-12-01)");
  cost->add_flag("--json", cost_json, "Print JSON");

  CLI::App* sync_down = app.add_subcommand(
      "sync-down", "Fetch a job's folder from the cluster it ran on (rsync; nothing here deleted)");
  std::string sync_id, sync_dest;
  sync_down->add_option("id", sync_id, "sky-..., the id sbatch printed or cluster:jobid")
      ->required();
  sync_down->add_option("dest", sync_dest,
                        "where to put it (default: the folder the job was submitted from)");

  CLI::App* dashboard = app.add_subcommand(
      "dashboard", "Serve the dashboard (clusters, GPUs, jobs) on 127.0.0.1 and print its link");
  skyslurm::cli::DashboardOptions dashboard_options;
  dashboard->add_option("--port", dashboard_options.port, "The port (default: a free one)")
      ->check(CLI::Range(0, 65535));
  dashboard->add_flag("--no-browser", dashboard_options.no_browser,
                      "Only print the link (its last line), open no browser");
  dashboard->add_flag("--stop", dashboard_options.stop, "Stop serving it");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  skyslurm::cli::GlobalSettingFlags() = setting_values;
  if (version) {
    std::printf("skyslurm %s (built against Slurm %s)\n", skyslurm::kVersion,
                skyslurm::kSlurmBuildVersion);
    return 0;
  }
  if (explain->parsed()) {
    // explain --yaml task.yaml: the task's batch script, as launch --dryrun shows it.
    const std::vector<std::string> rest = explain->remaining();
    if (!rest.empty() && (rest[0] == "--yaml" || rest[0].starts_with("--yaml="))) {
      skyslurm::cli::LaunchOptions as_task;
      as_task.dryrun = true;
      if (rest[0] == "--yaml" && rest.size() == 2) {
        as_task.task_file = rest[1];
      } else if (rest[0].starts_with("--yaml=") && rest.size() == 1) {
        as_task.task_file = rest[0].substr(7);
      } else {
        std::fputs("usage: skyslurm explain --yaml task.yaml\n", stderr);
        return 2;
      }
      return skyslurm::cli::RunLaunch(as_task);
    }
    return skyslurm::cli::RunExplain(rest);
  }
  if (launch->parsed()) return skyslurm::cli::RunLaunch(launch_options);
  if (export_cmd->parsed()) return skyslurm::cli::RunExport(export_script, export_output);
  if (describe->parsed()) return skyslurm::cli::RunDescribe(describe_clusters);
  if (gpus->parsed()) return skyslurm::cli::RunGpus(gpus_json);
  if (check->parsed()) return skyslurm::cli::RunCheck();
  if (queue->parsed()) return skyslurm::cli::RunQueue(queue_json, queue_expand);
  if (cancel->parsed()) return skyslurm::cli::RunCancel(cancel_ids);
  if (logs->parsed()) return skyslurm::cli::RunLogs(logs_id, logs_follow);
  if (status->parsed()) return skyslurm::cli::RunStatus(status_id, status_json);
  if (cost->parsed()) return skyslurm::cli::RunCost(cost_since, cost_json);
  if (sync_down->parsed()) return skyslurm::cli::RunSyncDown(sync_id, sync_dest);
  if (dashboard->parsed()) return skyslurm::cli::RunDashboard(dashboard_options);
  std::fputs(app.help().c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int rc = Main(argc, argv);
  if (skyslurm::place::TasksStillRunning() > 0) {
    // A probe of a cluster that did not answer in time still runs in libssh:
    // leave without running the libraries' exit handlers under it.
    std::fflush(nullptr);
    _exit(rc);
  }
  return rc;
}
