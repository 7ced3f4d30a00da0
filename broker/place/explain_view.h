// How `skyslurm explain` (and `sbatch --sky-explain`) shows a job: the
// request as sbatch reads it, each cluster's translation or reasons, and the
// placement with a verdict per candidate.
#pragma once

#include <string>
#include <vector>

#include "broker/job/request.h"
#include "broker/place/audit.h"
#include "broker/place/planner.h"
#include "shim/cli/cluster_views.h"

namespace skyslurm::cli {

struct ExplainText {
  std::string text;
  bool some_cluster_can_run_it = false;
};

ExplainText RenderExplain(const job::Request& request, const Workspace& ws, const place::Plan& plan,
                          bool with_placement);

using place::AuditLine;  // the line for decisions.log (broker/place/audit.h)

}  // namespace skyslurm::cli
