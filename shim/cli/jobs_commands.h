// The commands over skyslurmd's jobs (they start the daemon when needed):
//   skyslurm queue [--json] [--expand]  every cluster in one table (a spread
//                                 array one line; --expand: a line per part)
//   skyslurm cancel ID...         a sky id, an array's tasks (ID_[7,9-12]) or cluster:jobid
//   skyslurm logs [-f] ID         the job's output from whichever cluster (ID_7: one task's)
//   skyslurm status [--json] ID   the job's state, placement history and reasons
// Exit 0; 1 when the daemon or a cluster says no; 2 for bad usage.
#pragma once

#include <string>
#include <vector>

namespace skyslurm::cli {

int RunQueue(bool json, bool expand = false);
int RunCancel(const std::vector<std::string>& ids);
int RunLogs(const std::string& id, bool follow);
int RunStatus(const std::string& id, bool json);

}  // namespace skyslurm::cli
