// The SKYPILOT_* variables a job sees beside SLURM_* (the names and meanings
// of SkyPilot's own Slurm support), computed from facts about the step.
// Plain C++: remote_context.cc gathers the facts inside slurmstepd.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace skyslurm::spank {

struct StepFacts {
  std::vector<std::string> node_addresses;  // the job's nodes, host-list order
  long num_nodes = 0;
  long node_rank = 0;  // SLURM_NODEID
  long gpus_per_node = 0;
  std::string cluster;
  std::string partition;
  std::string job_id;
  std::string task_id;        // the SKYPILOT_TASK_ID the job brings ("": none)
  std::string array_task_id;  // SLURM_ARRAY_TASK_ID ("": not an array's task)
};

// SKYPILOT_NODE_IPS (newline-separated), SKYPILOT_NUM_NODES,
// SKYPILOT_NODE_RANK, SKYPILOT_NUM_GPUS_PER_NODE, SKYPILOT_CLUSTER_INFO
// (JSON), and SKYPILOT_TASK_ID: when `task_id_known` is false, one for the
// job (TaskIdForUnroutedJob); a routed job brings its own, which stays,
// but a routed array's task gets it with its index ("sky-...-abcdef_7"),
// so that every task of one sky job has an id of its own.
std::vector<std::pair<std::string, std::string>> SkypilotEnv(const StepFacts& facts,
                                                             bool task_id_known);

// sky-<cluster>_<job id>: what a step knows without asking slurmctld.
std::string TaskIdForUnroutedJob(const std::string& cluster, const std::string& job_id);

// The variable skyslurm sets in a job it routes: each node of the chosen
// partition whose address is not its name, "name=address;name=address".
inline constexpr const char* kNodeAddressesVar = "SKYSLURM_NODE_ADDRS";
// Each name's address in `map` (kNodeAddressesVar's value), else the name.
std::vector<std::string> AddressesFor(const std::vector<std::string>& names,
                                      const std::string& map);
// {"cloud": "slurm", "cluster": ..., "region": <cluster>, "zone": <partition>}
std::string ClusterInfoJson(const std::string& cluster, const std::string& partition);

// GPUs on this node from SLURM_GPUS_ON_NODE, else from a GPU index list
// ("0,1,3" or "0-3").
long GpusFrom(const char* gpus_on_node, const char* job_gpus);

}  // namespace skyslurm::spank
