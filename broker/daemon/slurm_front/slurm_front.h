// squeue, sacct, scontrol and scancel as the shims run them when a routed
// job is involved (docs/api.md: POST /v1/slurm): each cluster's own command
// runs for the jobs it holds (the home's for the rest, with the user's
// options as typed), and their outputs are merged in the command's own
// format with each routed job shown under the global id the user was given
// (job/global_id.h), from the copy it has now (a job that moved shows the
// copy it moved to). scancel of a routed job cancels the sky job; scontrol
// update of one goes with it when it moves (JobManager::CarryUpdate).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace skyslurm::daemon {

class JobManager;

struct ClientCommandAnswer {
  std::string out;
  std::string err;
  int exit_code = 0;
};

class SlurmFront {
 public:
  explicit SlurmFront(JobManager& manager) : manager_(manager) {}

  // `tool` (squeue, sacct, scontrol, scancel) with the user's arguments and
  // environment, for the routed jobs they name or list: each cluster's
  // command for its jobs, the outputs merged with the global ids in place.
  ClientCommandAnswer Run(const std::string& tool, const std::vector<std::string>& args,
                          const std::map<std::string, std::string>& env);

 private:
  JobManager& manager_;
};

}  // namespace skyslurm::daemon
