// How `skyslurm explain` (and `sbatch --sky-explain`) shows a job: the
// request as sbatch reads it, each cluster's translation or reasons, and the
// placement with a verdict per candidate; and the audit line a decision
// leaves.
#pragma once

#include <string>
#include <vector>

#include "broker/job/request.h"
#include "broker/place/planner.h"
#include "shim/cli/cluster_views.h"

namespace skyslurm::cli {

struct ExplainText {
  std::string text;
  bool some_cluster_can_run_it = false;
};

ExplainText RenderExplain(const job::Request& request, const Workspace& ws, const place::Plan& plan,
                          bool with_placement);

// One line for decisions.log: time, user, sky id, the job, the choice, each
// candidate with its verdict and estimate, how long the decision took.
std::string AuditLine(const place::Plan& plan, const std::string& user, const std::string& sky_id,
                      const std::string& job);

}  // namespace skyslurm::cli
