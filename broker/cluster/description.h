// What a cluster is made of, as far as translating a job for it goes:
// partitions (nodes, limits, default, accounts and QoS allowed), nodes (CPUs,
// memory, GRES, features) and the environment modules it offers. Read from
// the cluster itself (Describe) or from a description file (for tests and
// admins, docs/cluster-description.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "broker/util/command.h"
#include "broker/util/status.h"

namespace skyslurm::cluster {

struct Gres {
  std::string name;  // "gpu"
  std::string type;  // "nvidia_h100_80gb_hbm3", or ""
  std::int64_t count = 0;
  friend bool operator==(const Gres&, const Gres&) = default;
};

struct Node {
  std::string name;
  std::int64_t cpus = 0;
  std::int64_t memory_mb = 0;
  std::vector<Gres> gres;
  std::vector<std::string> features;
  std::vector<std::string> partitions;
  std::string state;  // "idle", "mixed", "down" ... (empty in a description file)
  // What running jobs hold now (sinfo --json only).
  std::vector<Gres> gres_used;
  std::int64_t alloc_cpus = 0;
  std::int64_t alloc_memory_mb = 0;
  // NodeAddr: where the node is reached ("" when not known, or the name).
  std::string address;
  // Whether the node can take jobs now (not down, drained, powered off...).
  bool usable() const;
  // A node of an elastic cluster powered down (or powering up or down) by
  // Slurm's power saving, and otherwise sound: capacity once it has booted.
  bool bootable() const;
  // Slurm's CLOUD flag: a node that exists only while powered up.
  bool cloud() const;
};

struct Partition {
  std::string name;
  bool is_default = false;
  std::vector<std::string> nodes;
  std::optional<std::int64_t> max_time_minutes;      // nullopt: UNLIMITED
  std::optional<std::int64_t> default_time_minutes;  // nullopt: none (jobs get MaxTime)
  std::optional<std::int64_t> max_nodes;             // nullopt: UNLIMITED
  std::vector<std::string> allow_accounts;           // empty: ALL
  std::vector<std::string> deny_accounts;
  std::vector<std::string> allow_qos;  // empty: ALL
  std::vector<std::string> deny_qos;
  std::string state = "UP";
  // Hidden=YES: not offered to users; a job goes there only when it names it.
  bool hidden = false;
  // OverSubscribe=EXCLUSIVE: every job gets whole nodes (and is billed them).
  bool exclusive = false;
};

// Nodes that look the same to a job (CPUs, memory, GRES, features, whether
// usable), counted: partitions of thousands of nodes have a handful of
// shapes, which is what makes checking every cluster in a decision cheap.
struct NodeShape {
  std::int64_t cpus = 0;
  std::int64_t memory_mb = 0;
  std::vector<Gres> gres;
  std::vector<std::string> features;
  bool usable = true;
  std::int64_t count = 0;
};

struct Description {
  std::string name;
  std::string slurm_version;
  std::vector<Partition> partitions;
  std::vector<Node> nodes;
  std::vector<std::string> modules;  // "name/version" or "name"
  bool modules_known = false;        // false: the module list could not be read
  // The options of the cluster's SPANK plugins, as its sbatch --help lists
  // them under "Options provided by plugins:" (names without "--"): an option
  // of a plugin the cluster does not load is refused by its sbatch.
  std::vector<std::string> plugin_options;
  bool plugin_options_known = false;  // false: not read (a description file)
  // The same of its srun --help: what a job's own steps can use (a plugin
  // may register an option in srun only).
  std::vector<std::string> srun_plugin_options;
  bool srun_plugin_options_known = false;
  // Its MaxArraySize (scontrol show config): every array index must be
  // below it. nullopt: not known (then only slurmctld checks).
  std::optional<std::int64_t> max_array_size;

  const Partition* FindPartition(std::string_view name) const;
  const Partition* DefaultPartition() const;
  // By name; fast once BuildIndex() has run (parsers run it).
  const Node* FindNode(std::string_view name) const;
  std::vector<const Node*> NodesOf(const Partition& partition) const;
  // The shapes of a partition's nodes (from BuildIndex; computed on the spot
  // when the index is stale).
  std::vector<NodeShape> ShapesOf(const Partition& partition) const;
  // Indexes the nodes by name and partitions by node shape; call again after
  // changing `nodes` or `partitions`.
  void BuildIndex();

 private:
  std::vector<NodeShape> ComputeShapes(const Partition& partition) const;
  std::unordered_map<std::string, std::size_t> node_index_;
  std::unordered_map<std::string, std::vector<NodeShape>> shapes_;  // by partition name
  std::size_t indexed_nodes_ = 0, indexed_partitions_ = 0;
};

// The nodes of `partitions` (none: the default partition) whose address
// is known and is not their name, as "name=address;name=address" (the
// value of SKYSLURM_NODE_ADDRS, which the SPANK plugin reads in the job's
// steps instead of looking names up or asking slurmctld). "" when none, or
// when the map would pass `max_bytes` (the plugin then gives names).
std::string NodeAddressMap(const Description& description,
                           const std::vector<std::string>& partitions,
                           std::size_t max_bytes = std::size_t{48} << 10);

// "gpu:h100:8,nvme:1" -> items ("(null)" and "" -> none). Slurm adds
// "(S:0-1)" socket bindings to some; they are dropped.
Result<std::vector<Gres>> ParseNodeGres(std::string_view text);

// sinfo --json (Slurm 22.05): the nodes. Strict: missing or mistyped fields
// are errors with the node's name.
// 22.05's {"nodes": [...]} or, from 23.02 on, {"sinfo": [...]} read per
// node (`sinfo -N --json`; grouped records of busy nodes: FailedPrecondition).
// `slurm_version`: the release its meta names ("24.11.5"), "" when none.
Result<std::vector<Node>> ParseSinfoJson(std::string_view json, std::string* slurm_version);

// Whether a Slurm release ("24.11.5", "slurm-wlm 22.05.8") is `major` or
// later; false when it names none.
bool ReleaseAtLeast(std::string_view release, int major);

// `scontrol show partition -o`: one line per partition, Key=Value pairs.
Result<std::vector<Partition>> ParseScontrolPartitions(std::string_view text);

// `scontrol show config`: its MaxArraySize ("MaxArraySize = 1001"); nullopt
// when the text has none, or not a number.
std::optional<std::int64_t> ParseMaxArraySize(std::string_view text);

// `module -t avail` (Lmod or Tcl modules) output: "name/version" lines;
// folder headers and bare "name/" lines are not modules.
std::vector<std::string> ParseModuleAvail(std::string_view text);

// A description file (YAML); node and partition names may be host lists.
Result<Description> ParseDescriptionYaml(std::string_view yaml, std::string_view file);
Result<Description> ReadDescriptionFile(const std::string& path);
std::string DescriptionToYaml(const Description& description);

// How to run a command on a cluster: locally with its SLURM_CONF, or (later)
// over SSH. `env` is added to the command's environment.
struct ClusterAccess {
  std::string name;
  CommandRunner* runner = nullptr;
  std::vector<std::pair<std::string, std::string>> env;
  std::chrono::milliseconds timeout{15'000};
};

// Asks the cluster: sinfo --json, scontrol show partition -o, module avail.
// A failing module listing leaves modules_known false; anything else failing
// is an error carrying Slurm's own message.
Result<Description> Describe(const ClusterAccess& access);

}  // namespace skyslurm::cluster
