// `skyslurm launch task.yaml`: a SkyPilot task run through the same
// translation, placement, tracking and failover as `sbatch --sky-any-cluster`
// (broker/task/: the task read, then made the batch job of each way to run
// it). `--dryrun` (and `skyslurm explain --yaml task.yaml`) prints each
// alternative's batch script and the explain view of it; otherwise the
// alternative that starts first (the first that can run, for `ordered`) is
// handed to skyslurmd as a managed sky job, its sky id and cluster printed,
// and its logs followed (Ctrl-C stops following, never the job) unless
// --detach-run. `skyslurm export job.sh`: the task equivalent to a batch
// script (task_export.h). Exit status: 0, 1 when no cluster can run it (or
// it could not be submitted), 2 on bad input.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace skyslurm::cli {

struct LaunchOptions {
  std::string task_file;
  std::optional<std::string> name, gpus, infra;
  std::optional<int> num_nodes;
  std::vector<std::string> env, secrets;  // NAME=value, or NAME (its value here)
  bool dryrun = false;
  bool detach_run = false;
  bool estimate = true;  // ask the schedulers when each cluster would start it
};

int RunLaunch(const LaunchOptions& options);

int RunExport(const std::string& script, const std::string& output);

}  // namespace skyslurm::cli
