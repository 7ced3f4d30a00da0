// What a routed sbatch prints once skyslurmd has taken the job, written by
// the daemon into its answer (docs/api.md: stdout, stderr, exit_code) so that
// every client prints the same lines: `skyslurm __route`, and the shim, which
// reaches the daemon itself and links no JSON library.
#pragma once

#include <string>

#include "broker/config/settings.h"
#include "broker/daemon/jobs/submit_types.h"
#include "broker/job/request.h"

namespace skyslurm::daemon {

struct SubmitText {
  // "Submitted batch job 805306380", or "805306380" (--parsable): the job's
  // global id (job/global_id.h), as a single cluster's sbatch prints its
  // id; in the multi-cluster form "... 805306380 on cluster gamma",
  // "805306380;gamma". A job without a global id (its id there does not fit
  // below 2^26) is always printed in the multi-cluster form, with the
  // cluster's own id.
  std::string out;
  std::string err;  // the notes (warnings, where it runs), as sbatch's own lines
  int exit_code = 0;
};

// `tool`: the command the user typed (its name starts each stderr line).
SubmitText RenderSubmitted(const std::string& tool, const job::Request& request,
                           const SubmitAnswer& answer,
                           config::SubmitOutput form = config::SubmitOutput::kSingleCluster);

}  // namespace skyslurm::daemon
