// squeue, sacct, scontrol and scancel as the shims run them when a routed
// job is involved (docs/api.md: POST /v1/slurm): each cluster's own command
// runs for the jobs it holds (the home's for the rest, with the user's
// options as typed), and their outputs are merged in the command's own
// format with each routed job shown under the global id the user was given
// (job/global_id.h), from the copy it has now (a job that moved shows the
// copy it moved to). scancel of a routed job cancels the sky job.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace skyslurm::daemon {

struct ClientCommandAnswer {
  std::string out;
  std::string err;
  int exit_code = 0;
};

}  // namespace skyslurm::daemon
