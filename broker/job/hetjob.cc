#include "broker/job/hetjob.h"

#include <algorithm>
#include <array>

namespace skyslurm::job {
namespace {

// Sorted. Slurm 22.05's list, with 24.11's additions (segment, tres-bind,
// tres-per-task), which an older sbatch does not know at all.
constexpr std::array<std::string_view, 61> kResetEachComponent = {
    "accel-bind",
    "bb",
    "bcast",
    "bcast-exclude",
    "compress",
    "constraint",
    "contiguous",
    "core-spec",
    "cores-per-socket",
    "cpu-bind",
    "cpu-freq",
    "cpu_bind",
    "cpus-per-gpu",
    "cpus-per-task",
    "distribution",
    "exclusive",
    "extra-node-info",
    "gpu-bind",
    "gpu-freq",
    "gpus",
    "gpus-per-node",
    "gpus-per-socket",
    "gpus-per-task",
    "gres",
    "gres-flags",
    "hint",
    "licenses",
    "mail-type",
    "mail-user",
    "mem-bind",
    "mem-per-cpu",
    "mem-per-gpu",
    "mincpus",
    "network",
    "nodefile",
    "nodelist",
    "nodes",
    "ntasks",
    "ntasks-per-core",
    "ntasks-per-gpu",
    "ntasks-per-node",
    "ntasks-per-socket",
    "ntasks-per-tres",
    "overcommit",
    "oversubscribe",
    "partition",
    "power",
    "relative",
    "resv-ports",
    "segment",
    "send-libs",
    "sockets-per-node",
    "spread-job",
    "switches",
    "tasks-per-node",
    "thread-spec",
    "threads-per-core",
    "tmp",
    "tres-bind",
    "tres-per-task",
    "use-min-nodes",
};

}  // namespace

bool ResetForEachComponent(std::string_view option) {
  static_assert(std::is_sorted(kResetEachComponent.begin(), kResetEachComponent.end()));
  return std::binary_search(kResetEachComponent.begin(), kResetEachComponent.end(), option);
}

}  // namespace skyslurm::job
