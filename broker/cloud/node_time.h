// Which job caused which billed node time on an elastic cluster: a provider
// bills a node from its power-up request to its power-down, boot and idle
// tail included; skyslurm charges that time to the jobs that caused it.
#pragma once

#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "broker/cloud/ledger.h"

namespace skyslurm::cloud {

// A job's use of nodes, as the cluster's accounting tells it.
struct NodeUse {
  std::string job_id;
  std::vector<std::string> nodes;
  std::time_t start = 0;
  std::time_t end = 0;  // 0: still running
  std::string user;     // who ran it ("" when unknown)
};

// Billed node-seconds per job id. Every second of every power-up in
// `ledger` (request to down, or to `now` while the node is up) goes to jobs:
// - while jobs run on the node, shared equally among them;
// - while none does, to the ones that ended last before (the idle tail a
//   SuspendTime leaves, and a gap between two jobs); before the node's
//   first job (its boot), to the ones that started first after.
// A power-up no job used is charged to "" (the site's, nobody's).
// Only seconds from `since` on are counted (a day's or a month's bill); the
// sum over all ids is the ledger's billed time from then.
std::map<std::string, double> AttributeNodeSeconds(const std::vector<PowerUp>& ledger,
                                                   const std::vector<NodeUse>& uses,
                                                   std::time_t now, std::time_t since = 0);

}  // namespace skyslurm::cloud
