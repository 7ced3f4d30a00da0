// How many GPUs a job asks for, read once from its request (every --gres,
// --gpus, --gpus-per-node, --gpus-per-task and --gpus-per-socket, as Slurm
// applies them): per node, in all, and by what scope it was asked. The one
// place the arithmetic is done; placement, translation for each kind of
// backend and the queue a submitted job joins read these figures.
#pragma once

#include <cstdint>
#include <string>

namespace skyslurm::job {

struct Request;

struct GpuDemand {
  // The type asked, as written ("" = any GPU): the first ask that names one.
  std::string type;
  // Nodes the job takes at least, and the tasks one node runs (its
  // --ntasks-per-node, else --ntasks spread over the nodes rounded up, else 1).
  std::int64_t nodes = 1;
  std::int64_t tasks_per_node = 1;
  // The most GPUs one node must hold for the job to fit there: a per-node or
  // per-socket count; a per-task count times the tasks of a node; a per-job
  // count's share of each node when --nodes fixes them (rounded up).
  std::int64_t per_node = 0;
  // The per-job count (--gpus), 0 when none: any nodes may hold them.
  std::int64_t asked_in_all = 0;
  // Every GPU the job holds: the per-job count, per-task counts times its
  // tasks (--ntasks, else the tasks of every node), per-node counts times
  // its nodes; the largest when several scopes are asked.
  std::int64_t total = 0;
  // The scopes asked.
  bool per_job = false, per_task = false, per_socket = false;
  // Each node's count is exactly per_node: asked per node, or per job on
  // one node (what a look at idle nodes can check without the scheduler).
  bool exact_per_node() const { return !per_task && !per_socket && (!per_job || nodes == 1); }
  // A per-job count's share of each of its nodes, rounded up (spread evenly).
  std::int64_t EvenShare() const;
};

// The request's GPU demand (ParseRequest keeps it in Request::gpu_demand).
GpuDemand DemandOf(const Request& request);

}  // namespace skyslurm::job
