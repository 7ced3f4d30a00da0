// An sbatch script as the SkyPilot task that asks for the same (`skyslurm
// export job.sh`): its name, nodes, GPUs per node (typed), CPUs and memory
// per node, its cluster and partition (infra), image and retries; its body
// (the script without its #SBATCH lines) as `run`, its folder as `workdir`.
// What a task cannot say (a time limit, an account, output files...) is
// listed as not carried over; a job no task can express (an array, GPUs of
// no type, GPUs per job over several nodes...) is an error saying why.
// Pure: launching the task (task_script.h) gives the same Slurm request.
#pragma once

#include <string>
#include <vector>

#include "broker/job/request.h"
#include "broker/task/task_script.h"
#include "broker/util/status.h"

namespace skyslurm::task {

struct ExportedTask {
  std::string yaml;
  std::vector<std::string> not_carried;  // "--time=30: a task has no time limit..."
};

// `site`: the clusters, so that a Kubernetes cluster the script names is
// written k8s/<context> (a Slurm one slurm/<cluster>).
Result<ExportedTask> ExportTask(const job::Request& request, const std::vector<SiteCluster>& site);

}  // namespace skyslurm::task
