// How `skyslurm explain` (and `sbatch --sky-explain`) shows a job: the
// request as sbatch reads it, each cluster's translation or reasons, and the
// placement with a verdict per candidate. Also skyslurmd's, for the
// dashboard's "where would this start?" and a job's translation per cluster.
#pragma once

#include <string>
#include <vector>

#include "broker/job/request.h"
#include "broker/place/audit.h"
#include "broker/place/planner.h"
#include "broker/place/workspace.h"

namespace skyslurm::place {

struct ExplainText {
  std::string text;
  bool some_cluster_can_run_it = false;
};

// `submit_dir`: where the job was submitted from (its folder is copied
// from there), never the caller's own folder (skyslurmd's is its state).
ExplainText RenderExplain(const job::Request& request, const Workspace& ws, const Plan& plan,
                          bool with_placement, const std::string& submit_dir);

}  // namespace skyslurm::place
