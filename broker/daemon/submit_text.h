// What a routed sbatch prints once skyslurmd has taken the job, written by
// the daemon into its answer (docs/api.md: stdout, stderr, exit_code) so that
// every client prints the same lines: `skyslurm __route`, and the shim, which
// reaches the daemon itself and links no JSON library.
#pragma once

#include <string>

#include "broker/daemon/job_manager.h"
#include "broker/job/request.h"

namespace skyslurm::daemon {

struct SubmitText {
  std::string out;  // "Submitted batch job 12 on cluster gamma", or "12;gamma" (--parsable)
  std::string err;  // the notes (warnings, where it runs), as sbatch's own lines
  int exit_code = 0;
};

// `tool`: the command the user typed (its name starts each stderr line).
SubmitText RenderSubmitted(const std::string& tool, const job::Request& request,
                           const SubmitAnswer& answer);

}  // namespace skyslurm::daemon
