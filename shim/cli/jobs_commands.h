// The commands over skyslurmd's jobs (they start the daemon when needed):
//   skyslurm queue [--json]       every cluster in one table
//   skyslurm cancel ID...         a sky id or cluster:jobid
//   skyslurm logs [-f] ID         the job's output from whichever cluster
//   skyslurm status [--json] ID   the job's state, placement history and reasons
// Exit 0; 1 when the daemon or a cluster says no; 2 for bad usage.
#pragma once

#include <string>
#include <vector>

namespace skyslurm::cli {

int RunQueue(bool json);
int RunCancel(const std::vector<std::string>& ids);
int RunLogs(const std::string& id, bool follow);
int RunStatus(const std::string& id, bool json);

}  // namespace skyslurm::cli
