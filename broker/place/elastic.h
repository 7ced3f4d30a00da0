// What placement needs to know of an elastic cluster's partition (nodes that
// Slurm's power saving boots on demand, billed by a provider): whether it is
// one, how long a node takes to boot and how that is known, whether it is
// spot, and what a job is expected to cost there. Pure: the settings, the
// cluster's description and its ledger in, facts out.
#pragma once

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/cloud/ledger.h"
#include "broker/cluster/description.h"
#include "broker/cluster/queue.h"
#include "broker/config/settings.h"
#include "broker/util/status.h"

namespace skyslurm::place {

// A boot's length when neither the ledger nor the settings say (a cloud VM
// with Slurm's image: minutes).
inline constexpr int kAssumedBootSeconds = 300;

struct ElasticFacts {
  bool elastic = false;
  bool spot = false;
  int boot_seconds = 0;         // elastic: a node's boot
  std::string boot_basis;       // "median of 3 boots in the ledger", "boot_time", ...
  std::optional<double> price;  // per GPU-hour; nullopt: free
  int idle_tail_seconds = 0;    // elastic: billed after the job (suspend_time)
};

// The facts of `partition`: elastic when the settings say so (boot_time,
// ledger) or any of its nodes is a CLOUD or power-saved node. The boot is
// measured from `ledger` (null or empty: none), else the settings'
// boot_time, else kAssumedBootSeconds.
ElasticFacts ElasticFactsOf(const config::ClusterSettings& settings,
                            const cluster::Description& description, const std::string& partition,
                            const std::vector<cloud::PowerUp>* ledger);

// The ledger named by the settings, read and parsed (an error names the
// file and line); none there yet is an empty ledger (no node has booted).
Result<std::vector<cloud::PowerUp>> ReadLedger(const std::string& path);

// How a job would meet an elastic partition's nodes, which decides when it
// starts and what it causes to be billed.
enum class NodeStart {
  kBoots,          // powered-down nodes boot for it: whole nodes, boot and idle tail
  kIdleUp,         // wholly idle nodes already up: whole nodes and idle tail, no boot
  kShares,         // up nodes already running other jobs: its GPUs for its run
  kSharesBooting,  // nodes booting for other jobs: after their boot, its GPUs for its run
};

// How a job placed by the scheduler on `nodes` (a Slurm hostlist, as
// sbatch --test-only names them) meets them, from their states in
// `description`: kBoots unless every node is known and powered up (or
// powering up for jobs already there).
NodeStart NodeStartOn(const cluster::Description& description, std::string_view nodes);

// Whether `waiting_gpus` (GPUs of jobs waiting on the cluster that would
// otherwise run this one) fill the rest of the nodes a job of `nodes` nodes
// wanting `job_gpus_per_node` GPUs each boots in `partition`: a queue that
// deep shares the nodes with it.
bool WaitingWorkFillsNodes(const cluster::Description& description, const std::string& partition,
                           std::int64_t nodes, std::int64_t job_gpus_per_node,
                           std::int64_t waiting_gpus);

// What a job of `nodes` nodes wanting `job_gpus_per_node` GPUs each is
// expected to cost in `partition` for `minutes` of run time, nullopt when
// the partition has no price. It is billed what Slurm allocates it: its
// GPUs, or its nodes whole when it gets them whole (`whole_nodes`:
// --exclusive, or the partition's OverSubscribe=EXCLUSIVE). On an elastic
// cluster that is from the boot (kBoots) to the end of the idle tail (the
// cluster's suspend_time), unless the job shares nodes others keep up
// (kShares, kSharesBooting: the provider bills them whether or not it
// comes), then for its run only. The rest of the nodes' time is others'
// share: the waiting work that fills them, or the partition's next jobs.
std::optional<double> ExpectedJobCost(const ElasticFacts& facts,
                                      const cluster::Description& description,
                                      const std::string& partition, std::int64_t nodes,
                                      std::int64_t job_gpus_per_node, std::int64_t minutes,
                                      NodeStart start, bool whole_nodes);

// The most GPUs a node of `partition` has (what a whole node is billed as).
std::int64_t GpusPerNode(const cluster::Description& description, const std::string& partition);

// Whether every job in `partition` gets whole nodes (OverSubscribe=EXCLUSIVE).
bool WholeNodePartition(const cluster::Description& description, const std::string& partition);

// What a job that boots `nodes` nodes the waiting work fills (ExpectedJobCost
// with `filled`) adds to the provider's bill: its GPUs for its `minutes`,
// and the nodes' boot and idle tail whole. The bill shares those among the
// jobs on the nodes, but the job that boots them causes them: the jobs
// that join it later add their runs only. nullopt when the partition has no
// price.
std::optional<double> BootedNodesAddedCost(const ElasticFacts& facts,
                                           const cluster::Description& description,
                                           const std::string& partition, std::int64_t nodes,
                                           std::int64_t job_gpus_per_node, std::int64_t minutes);

// What the waiting jobs that fill the rest of the nodes a job boots
// (WaitingWorkFillsNodes) gain from them, at `wait_worth` per GPU-hour of
// waiting: the nodes are opened for that work, not for the one job, so the
// job that boots them is weighed at what booting adds (BootedNodesAddedCost)
// less this gain, never below its share. Those jobs are the `rest` GPUs
// waiting just ahead of it on the fixed cluster (`waiting_gpus` ahead of
// it, which it reaches `fixed_wait_s` from now): on a queue that drains at
// an even rate they start, on average, at fixed_wait_s x (1 - rest /
// (2 x waiting_gpus)), and the nodes would start them `boot_wait_s` from
// now. Their runs are taken as the job's `minutes` (the one run time known
// here), billed for their GPUs at the partition's price.
struct WaitingWorkGain {
  std::int64_t gpus = 0;  // the rest of the nodes' GPUs
  double spared_s = 0;    // the wait each of them is spared, on average
  double wait_worth = 0;  // what those waits are worth
  double run_cost = 0;    // their GPUs' bill for their runs
  double Net() const { return std::max(0.0, wait_worth - run_cost); }
};
WaitingWorkGain GainOfWaitingWork(const ElasticFacts& facts,
                                  const cluster::Description& description,
                                  const std::string& partition, std::int64_t nodes,
                                  std::int64_t job_gpus_per_node, std::int64_t minutes,
                                  std::int64_t waiting_gpus, double fixed_wait_s,
                                  double boot_wait_s, double wait_worth_per_gpu_hour);

// Until when the jobs running on each of `nodes` (a Slurm hostlist, as
// sbatch --test-only names them) keep it up: the latest end Slurm gives
// them (their start plus time limit). 0 for a node with none, or when the
// list cannot be read.
std::vector<std::time_t> NodesKeptUpUntil(const std::vector<cluster::QueuedJob>& jobs,
                                          std::string_view nodes);

// What a job ending at `job_end` adds to the provider's bill beside jobs
// on nodes they keep up until `kept_up_until` (NodesKeptUpUntil): each
// node's time past its jobs' end to the job's, whole nodes at the
// partition's price; nothing when they outlast it (the node is billed
// anyway, and its idle tail only moves). nullopt when the partition has no
// price, or a node's end is not known (0).
std::optional<double> AddedNodeCost(const ElasticFacts& facts,
                                    const cluster::Description& description,
                                    const std::string& partition,
                                    const std::vector<std::time_t>& kept_up_until,
                                    std::time_t job_end);

}  // namespace skyslurm::place
