// A routed sbatch handed to the user's skyslurmd, which places, submits and
// tracks it (POST /v1/jobs): what it answers printed as Slurm's sbatch
// prints it, a Ctrl-C while it places the job cancelling the job, --wait
// waited for through it.
#pragma once

#include <string>

#include "broker/config/settings.h"
#include "broker/daemon/jobs/job_input.h"
#include "broker/job/request.h"
#include "shim/cli/daemon_client.h"
#include "shim/route/route_support.h"

namespace skyslurm::route {

// A lost connection is retried with the same sky id: the daemon answers
// with the job it has, never a second one. `form`: how this command prints
// the job it submitted (its own environment and configuration's
// submit_output, never the daemon's). The command's exit status.
int SubmitThroughDaemon(const std::string& tool, const job::Request& request,
                        cli::DaemonClient& client, const daemon::JobInput& input,
                        Progress& progress, const config::FailoverSettings& failover,
                        config::SubmitOutput form);

}  // namespace skyslurm::route
