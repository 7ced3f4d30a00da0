// The router: what `sbatch`/`salloc`/`srun` do when asked to route a job
// (--sky-any-cluster, --sky-infra, --sky-explain, an #SBATCH --sky-* line,
// or SKYSLURM_ANY_CLUSTER=1). The shim's front execs `skyslurm __route MODE
// ARGS...` only then, so that a plain sbatch never loads any of this.
//
// sbatch: parse, translate, place, submit where the job starts first, and
// print what Slurm's multi-cluster sbatch prints ("Submitted batch job 42 on
// cluster beta", "42;beta" with --parsable, nothing with --quiet); errors on
// stderr as "sbatch: error: ..." with exit status 1.
// salloc/srun: on the home cluster the real command with the translated
// options; on a peer, the same through `ssh` (a terminal when there is one).
#pragma once

#include <string>
#include <vector>

namespace skyslurm::route {

int RunRoute(const std::string& mode, const std::vector<std::string>& args);

// squeue, sacct, scontrol or scancel involving routed jobs when the shim
// found no skyslurmd to answer (daemon_handoff.h): the daemon started, the
// command run by it (POST /v1/slurm), its output printed; when no daemon
// can start, the real command as typed, with a warning.
int RunClient(const std::string& tool, const std::vector<std::string>& args);

}  // namespace skyslurm::route
