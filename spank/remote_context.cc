// Remote context: inside slurmstepd, once per step on each node (user_init),
// and in each task (task_init). Nothing here may fail a job: every problem
// is logged and the step goes on without the variable. Nothing here costs
// the controller or the network anything: no RPC to slurmctld, no name
// lookup, no thread, in any step of any job. What a step needs comes from
// its own environment (SLURM_*, and what skyslurm put there when it routed
// the job) and from spank_get_item.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "spank/context.h"
#include "spank/remote_env.h"

extern "C" {
#include <slurm/slurm.h>
}

// Bound to the Slurm library slurmstepd already has loaded (host lists are
// parsed in this process: no RPC); weak, so that a host without them (none
// known) leaves the plugin working on a plain comma list.
#pragma weak slurm_hostlist_create
#pragma weak slurm_hostlist_shift
#pragma weak slurm_hostlist_destroy

namespace skyslurm::spank {
namespace {

// The variables this plugin set in this step (never ones the user set).
std::map<std::string, std::string>& SetByUs() {
  static std::map<std::string, std::string> vars;
  return vars;
}

std::optional<std::string> JobEnv(spank_t sp, const char* name) {
  std::vector<char> buf(65536);
  if (spank_getenv(sp, name, buf.data(), static_cast<int>(buf.size())) != ESPANK_SUCCESS) {
    return std::nullopt;
  }
  return std::string(buf.data());
}

std::vector<std::string> ExpandNodes(const std::string& list) {
  std::vector<std::string> names;
  if (slurm_hostlist_create != nullptr && slurm_hostlist_shift != nullptr &&
      slurm_hostlist_destroy != nullptr) {
    // auto*: hostlist_t is the pointer up to Slurm 23.02 and the struct
    // from 23.11 on; slurm_hostlist_create returns `struct hostlist*` in both.
    auto* hl = slurm_hostlist_create(list.c_str());
    if (hl != nullptr) {
      while (char* host = slurm_hostlist_shift(hl)) {
        names.emplace_back(host);
        std::free(host);
      }
      slurm_hostlist_destroy(hl);
      return names;
    }
  }
  // Without Slurm's host lists: a plain comma list.
  std::string current;
  for (char c : list) {
    if (c == ',') {
      if (!current.empty()) names.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) names.push_back(current);
  return names;
}

// What this plugin set, carried in the job's environment as
// NAME:hash,...: a step (srun inside the batch script) inherits the batch
// step's values, which are ours to replace while they are unchanged; a value
// the user changed or set is theirs.
constexpr const char* kOursVar = "SKYSLURM_SKYPILOT_VARS";

std::string Hash(const std::string& value) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (char c : value) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

bool StillOurs(spank_t sp, const std::string& ours_list, const std::string& name) {
  const auto current = JobEnv(sp, name.c_str());
  if (!current) return true;  // not set at all
  const std::string entry = name + ":" + Hash(*current);
  std::size_t start = 0;
  while (start <= ours_list.size()) {
    auto end = ours_list.find(',', start);
    if (end == std::string::npos) end = ours_list.size();
    if (ours_list.compare(start, end - start, entry) == 0) return true;
    start = end + 1;
  }
  return false;
}

void Set(spank_t sp, const std::string& name, const std::string& value, const std::string& ours) {
  if (!StillOurs(sp, ours, name)) return;  // the user's
  if (spank_setenv(sp, name.c_str(), value.c_str(), 1) == ESPANK_SUCCESS) {
    SetByUs()[name] = value;
  }
}

}  // namespace

int RemoteUserInit(spank_t sp) {
  if (!State().args.env) return 0;
  StepFacts f;
  const std::string nodelist = JobEnv(sp, "SLURM_JOB_NODELIST").value_or("");
  const std::vector<std::string> names = ExpandNodes(nodelist);
  // The addresses skyslurm read from the cluster's description when it
  // routed the job; else (a job it did not route) the names themselves.
  f.node_addresses = AddressesFor(names, JobEnv(sp, kNodeAddressesVar).value_or(""));
  // S_JOB_NNODES is 0 in the batch step; the job's count is in its env.
  uint32_t nnodes = 0, nodeid = 0;
  spank_get_item(sp, S_JOB_NNODES, &nnodes);
  spank_get_item(sp, S_JOB_NODEID, &nodeid);
  const auto job_nodes = JobEnv(sp, "SLURM_JOB_NUM_NODES");
  f.num_nodes = job_nodes ? std::strtol(job_nodes->c_str(), nullptr, 10)
                          : (nnodes > 0 ? nnodes : static_cast<long>(names.size()));
  f.node_rank = nodeid;
  const auto gpus = JobEnv(sp, "SLURM_GPUS_ON_NODE");
  const auto job_gpus = JobEnv(sp, "SLURM_JOB_GPUS");
  f.gpus_per_node =
      GpusFrom(gpus ? gpus->c_str() : nullptr, job_gpus ? job_gpus->c_str() : nullptr);
  f.cluster = JobEnv(sp, "SLURM_CLUSTER_NAME").value_or("");
  f.partition = JobEnv(sp, "SLURM_JOB_PARTITION").value_or("");
  uint32_t job_id = 0;
  spank_get_item(sp, S_JOB_ID, &job_id);
  f.job_id = std::to_string(job_id);
  const std::string ours = JobEnv(sp, kOursVar).value_or("");
  // A routed job brings its task id (stable across moves): never replaced.
  const auto task_id = JobEnv(sp, "SKYPILOT_TASK_ID");
  const bool task_id_known = task_id.has_value();
  f.task_id = task_id.value_or("");
  f.array_task_id = JobEnv(sp, "SLURM_ARRAY_TASK_ID").value_or("");
  for (const auto& [name, value] : SkypilotEnv(f, task_id_known)) {
    if (name == "SKYPILOT_TASK_ID" && task_id_known) {
      // A routed array's task: skyslurm's id, not the user's, with its index.
      if (spank_setenv(sp, name.c_str(), value.c_str(), 1) == ESPANK_SUCCESS) {
        SetByUs()[name] = value;
      }
      continue;
    }
    Set(sp, name, value, ours);
  }
  if (!f.array_task_id.empty()) {
    // A part of an array skyslurm spread over clusters: its tasks see the
    // whole array's bounds (skyslurmd sends them), as on one cluster.
    for (const std::string what : {"MIN", "MAX", "COUNT"}) {
      const auto whole = JobEnv(sp, ("SKYSLURM_ARRAY_TASK_" + what).c_str());
      if (whole && !whole->empty()) {
        spank_setenv(sp, ("SLURM_ARRAY_TASK_" + what).c_str(), whole->c_str(), 1);
      }
    }
  }
  std::string set_names;
  for (const auto& [name, value] : SetByUs()) {
    set_names += (set_names.empty() ? "" : ",") + name + ":" + Hash(value);
  }
  if (!set_names.empty()) spank_setenv(sp, kOursVar, set_names.c_str(), 1);
  return 0;
}

int RemoteTaskInit(spank_t sp) {
  if (!State().args.env) return 0;
  // The GPU count is certain only once the task's environment is complete.
  auto& ours = SetByUs();
  if (!ours.contains("SKYPILOT_NUM_GPUS_PER_NODE")) return 0;
  const auto gpus = JobEnv(sp, "SLURM_GPUS_ON_NODE");
  const auto job_gpus = JobEnv(sp, "SLURM_JOB_GPUS");
  const long n = GpusFrom(gpus ? gpus->c_str() : nullptr, job_gpus ? job_gpus->c_str() : nullptr);
  // The task's own copy; the recorded hash stays the step's (user_init's).
  if (n > 0) spank_setenv(sp, "SKYPILOT_NUM_GPUS_PER_NODE", std::to_string(n).c_str(), 1);
  return 0;
}

}  // namespace skyslurm::spank
