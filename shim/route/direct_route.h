// A job this command places itself (no skyslurmd answers, or --test-only):
// an sbatch job submitted where the plan chose through the one submission
// pipeline (place/submission.h: its folder measured, packed or copied with
// a progress line, then sbatch there), printed as Slurm's multi-cluster
// sbatch prints it and waited for (--wait) on its cluster; a salloc or srun
// run by the real command at home, or through the user's ssh on a peer.
#pragma once

#include <string>
#include <vector>

#include "broker/config/environment.h"
#include "broker/config/settings.h"
#include "broker/job/request.h"
#include "broker/place/planner.h"
#include "broker/place/workspace.h"
#include "shim/route/route_support.h"

namespace skyslurm::route {

struct DirectJob {
  const std::string& tool;
  const job::Request& request;
  place::Workspace& ws;
  place::Plan& plan;
  place::ClusterHandle& target;
  std::size_t cluster_index = 0;  // the target's, in the plan's clusters
  std::string sky_id;
  bool quiet = false;  // -Q/--quiet: no notes of ours either
};

// sbatch: the command's exit status.
int SubmitDirect(const DirectJob& job, const config::Environment& env, Progress& progress,
                 const config::Settings& settings);

// salloc/srun: runs in place of this process (or says why it cannot).
int RunInteractive(const DirectJob& job, const std::string& real);

}  // namespace skyslurm::route
