// What a cluster has and is doing, at one moment: its description with each
// node's state and the GRES in use, and its job queue. Built from one probe
// (Backend::Probe); pure computations on it here.
#pragma once

#include <ctime>
#include <string>
#include <vector>

#include "broker/catalog/accelerators.h"
#include "broker/cluster/description.h"
#include "broker/cluster/limit_use.h"
#include "broker/cluster/queue.h"

namespace skyslurm::cluster {

struct Inventory {
  Description description;
  std::vector<QueuedJob> jobs;  // pending and running
  std::time_t probed_at = 0;
  // What the jobs lately ended there say of their time limits.
  LimitUse limit_use;
  // Jobs the probe saw ended (squeue lists them for MinJobAge after their
  // end): not in `jobs`, and never to be counted there again.
  std::vector<std::string> ended;
};

// One row of `skyslurm gpus`: a partition's GPUs of one type.
struct GpuRow {
  std::string cluster;
  std::string partition;
  std::string type;       // the cluster's own spelling
  std::string canonical;  // the catalog's name ("" when unknown)
  std::int64_t total = 0;
  std::int64_t free = 0;             // on usable nodes, not held by running jobs
  std::int64_t bootable = 0;         // on powered-down nodes: usable once booted
  std::int64_t pending_demand = 0;   // GPUs that pending jobs in the partition ask for
};

std::vector<GpuRow> GpuTable(const Inventory& inventory, const catalog::AcceleratorCatalog& catalog);

}  // namespace skyslurm::cluster
