// What a Slurm cluster's accounting says of the jobs that held its nodes:
// sacct's allocations (-X), every user's (-a), read as NodeUse rows for
// attributing an elastic cluster's bill (cloud/bill.h).
#pragma once

#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "broker/cloud/node_time.h"
#include "broker/util/status.h"

namespace skyslurm::backend {

// sacct's arguments for the allocations that held nodes from `since` on,
// printed as SacctNodeUses reads them (times in UTC: run it with TZ=UTC).
std::vector<std::string> SacctNodeUseArgs(std::time_t since);

// `sacct -X -a -n -P -o JobIDRaw,User,NodeList,Start,End` output. A job
// that never held a node (NodeList "None assigned", no Start) is left out;
// an End of "Unknown" is a job still running (end 0). A line of another
// shape is an error naming it.
Result<std::vector<cloud::NodeUse>> ParseSacctNodeUses(std::string_view text);

}  // namespace skyslurm::backend
