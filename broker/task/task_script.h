// A SkyPilot task (task_spec.h) as the Slurm batch jobs that run it: one per
// way to run it (each accelerator alternative of each resources entry), each
// a script whose #SBATCH lines ask for what the task asks (nodes, GPUs per
// node, CPUs, memory, the clusters its infra names, its image) and whose
// body runs `setup` then `run` on every node with srun, as SkyPilot does
// (SKYPILOT_* set by the plugin on each node; the head's lines live, each
// line prefixed "(head, rank=0)" / "(worker1, rank=1)", the workers' after
// it, in rank order). The script goes through the same translation,
// placement, tracking and failover as `sbatch --sky-any-cluster`. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/catalog/accelerators.h"
#include "broker/task/task_spec.h"
#include "broker/util/status.h"

namespace skyslurm::task {

// A cluster as a task's `infra` may name it.
struct SiteCluster {
  std::string name;
  // SkyPilot's name for its kind in a task's infra: "slurm" or "k8s" ("" =
  // none: only its own name reaches it).
  std::string cloud = "slurm";
  std::string context;   // Kubernetes: its kubeconfig context ("" = its name)
  bool elastic = false;  // a cloud's nodes (docs/cloud.md): what a cloud's name means here
  std::vector<std::string> spot_partitions;
};

// The command line's overrides (`skyslurm launch -n --gpus --infra
// --num-nodes --env --secret`).
struct TaskOverrides {
  std::optional<std::string> name;
  std::optional<std::string> gpus;  // "H100:8"
  std::optional<std::string> infra;
  std::optional<int> num_nodes;
  std::vector<std::pair<std::string, std::string>> env;      // NAME=value
  std::vector<std::pair<std::string, std::string>> secrets;  // NAME=value
};

struct TaskJob {
  std::string label;   // the alternative: "H100:8", "A100:8", "no GPU"
  std::string script;  // the batch script (#SBATCH lines, then the body)
  // The secrets, given to the job in its environment: never in the script.
  std::vector<std::pair<std::string, std::string>> secrets;
};

struct TaskJobs {
  std::vector<TaskJob> alternatives;
  bool ordered = false;  // the first that can run, else the one that starts first
  std::string workdir;   // absolute; "" = none (nothing copied, the run starts in ~)
  std::vector<std::string> notes;
};

// `task_dir`: the folder of the task file (its relative paths are from
// there). Errors name the field (and the line when the file gave it).
Result<TaskJobs> TaskToJobs(const TaskSpec& task, const TaskOverrides& overrides,
                            const std::vector<SiteCluster>& site,
                            const catalog::AcceleratorCatalog& catalog, std::string_view task_dir);

}  // namespace skyslurm::task
