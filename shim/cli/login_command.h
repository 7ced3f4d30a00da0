// `skyslurm login CLUSTER`: opens the session to a cluster whose bastion asks
// for a one-time code (config/login_session.h). The code is asked once by
// ssh on the terminal, or read from stdin (one line) when that is not a
// terminal; the session lasts `session_lifetime`, and skyslurmd, rsync and
// salloc reach the cluster through it. `skyslurm logout CLUSTER` closes it.
#pragma once

#include <string>

namespace skyslurm::cli {

// `report_on_stderr`: the session's line on stderr (salloc/srun opening it
// before their own output).
int RunLogin(const std::string& cluster, bool report_on_stderr = false);
int RunLogout(const std::string& cluster);

// ssh's SSH_ASKPASS when the code came on stdin: prints the file that
// SKYSLURM_ASKPASS_FILE names. True when this process was run as that.
bool RunAsAskpass();

}  // namespace skyslurm::cli
