// skyslurm sync-down ID [DEST]: a job's folder on the cluster it ran on
// (the one its folder was copied to), fetched with rsync over the user's
// SSH settings into DEST (default: the folder the job was submitted from).
// Files newer here are kept; nothing here is deleted. Exit 0; 1 when the
// job has no such folder or the copy fails; 2 for bad usage.
#pragma once

#include <string>

namespace skyslurm::cli {

int RunSyncDown(const std::string& id, const std::string& dest);

}  // namespace skyslurm::cli
