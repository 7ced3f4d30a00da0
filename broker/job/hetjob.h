// How sbatch carries options from one heterogeneous job component to the
// next ("#SBATCH hetjob" lines, or ':' on the command line): an option that
// sizes or places a component (nodes, tasks, CPUs, memory per CPU or GPU,
// GPUs, GRES, constraint, partition, node lists...) starts afresh in each
// component; every other one (account, QoS, time limit, --mem, job name,
// output...) carries on until a component sets it again.
#pragma once

#include <string_view>

namespace skyslurm::job {

// Whether sbatch resets `option` (its long name, no dashes) to its default
// at the start of each component: Slurm's own list (src/common/slurm_opt.c,
// `reset_each_pass`), as Slurm 22.05 and 24.11 have it.
bool ResetForEachComponent(std::string_view option);

}  // namespace skyslurm::job
