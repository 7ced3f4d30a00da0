#include "broker/place/elastic.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "broker/cloud/cost.h"
#include "broker/cluster/hostlist.h"

namespace skyslurm::place {

std::int64_t GpusPerNode(const cluster::Description& d, const std::string& partition) {
  const cluster::Partition* p = d.FindPartition(partition);
  if (p == nullptr) return 0;
  std::int64_t most = 0;
  for (const cluster::Node* n : d.NodesOf(*p)) {
    std::int64_t here = 0;
    for (const auto& g : n->gres) {
      if (g.name == "gpu") here += g.count;
    }
    most = std::max(most, here);
  }
  return most;
}

ElasticFacts ElasticFactsOf(const config::ClusterSettings& settings,
                            const cluster::Description& description, const std::string& partition,
                            const std::vector<cloud::PowerUp>* ledger) {
  ElasticFacts f;
  f.price = settings.PriceIn(partition);
  f.spot = std::find(settings.spot.begin(), settings.spot.end(), partition) != settings.spot.end();
  f.elastic = settings.SaysElastic();
  if (const cluster::Partition* p = description.FindPartition(partition); p && !f.elastic) {
    for (const cluster::Node* n : description.NodesOf(*p)) {
      f.elastic = f.elastic || n->cloud() || n->bootable();
    }
  }
  if (!f.elastic) return f;
  f.idle_tail_seconds = settings.suspend_time;
  if (ledger != nullptr) {
    if (auto measured = cloud::MeasuredBootSeconds(*ledger, partition)) {
      f.boot_seconds = *measured;
      f.boot_basis = "measured: the median of the ledger's latest boots";
      return f;
    }
  }
  // A ledger with no boot yet (no node has booted) measures nothing.
  const std::string why = ledger == nullptr ? "no ledger"
                          : ledger->empty() ? "no node has booted yet for the ledger to measure"
                                            : "the ledger has no completed boot to measure";
  if (settings.boot_time > 0) {
    f.boot_seconds = settings.boot_time;
    f.boot_basis = ledger != nullptr ? "boot_time (" + why + ")" : "boot_time";
  } else {
    f.boot_seconds = kAssumedBootSeconds;
    f.boot_basis = fmt::format("assumed: {} and no boot_time for this cluster", why);
  }
  return f;
}

Result<std::vector<cloud::PowerUp>> ReadLedger(const std::string& path) {
  // The provider writes its ledger at its first power-up: none yet is no
  // boot yet, not an error.
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) return std::vector<cloud::PowerUp>{};
  std::ifstream in(path);
  if (!in) return NotFoundError(fmt::format("{}: cannot read the ledger", path));
  std::ostringstream text;
  text << in.rdbuf();
  return cloud::ParseLedger(text.str(), path);
}

NodeStart NodeStartOn(const cluster::Description& description, std::string_view nodes) {
  auto names = cluster::ExpandHostlist(nodes);
  if (!names.ok() || names->empty()) return NodeStart::kBoots;
  bool busy = false, booting = false;
  for (const std::string& name : *names) {
    const cluster::Node* n = description.FindNode(name);
    if (n == nullptr) return NodeStart::kBoots;
    // Holding jobs already: its own state before the flags, or what they hold.
    const std::string_view base = std::string_view(n->state).substr(0, n->state.find('+'));
    const bool holds = base == "mixed" || base == "allocated" || n->alloc_cpus > 0;
    if (n->usable()) {
      busy = busy || holds;
    } else if (n->bootable() && n->state.find("+POWERING_UP") != std::string::npos && holds) {
      // Booting for jobs already placed there: their boot, not this job's.
      busy = booting = true;
    } else {
      return NodeStart::kBoots;  // powered down (or going): booted for this job
    }
  }
  if (booting) return NodeStart::kSharesBooting;
  return busy ? NodeStart::kShares : NodeStart::kIdleUp;
}

bool WaitingWorkFillsNodes(const cluster::Description& description, const std::string& partition,
                           std::int64_t nodes, std::int64_t job_gpus_per_node,
                           std::int64_t waiting_gpus) {
  const std::int64_t rest =
      (GpusPerNode(description, partition) - job_gpus_per_node) * std::max<std::int64_t>(nodes, 1);
  // A job that takes its nodes whole has nothing to share.
  return rest > 0 && waiting_gpus >= rest;
}

std::optional<double> ExpectedJobCost(const ElasticFacts& facts,
                                      const cluster::Description& description,
                                      const std::string& partition, std::int64_t nodes,
                                      std::int64_t job_gpus_per_node, std::int64_t minutes,
                                      NodeStart start, bool whole_nodes) {
  if (!facts.price) return std::nullopt;
  cloud::ExpectedUse use;
  use.nodes = static_cast<int>(std::max<std::int64_t>(nodes, 1));
  use.run = std::chrono::minutes(minutes);
  use.gpus_per_node = static_cast<int>(job_gpus_per_node);
  // What Slurm allocates is what the job is billed: whole nodes only when
  // it gets them (--exclusive, or a partition's OverSubscribe=EXCLUSIVE);
  // on a shared partition the rest of a node is other jobs' to use.
  if (whole_nodes) use.gpus_per_node = static_cast<int>(GpusPerNode(description, partition));
  if (facts.elastic && start != NodeStart::kShares && start != NodeStart::kSharesBooting) {
    // The provider bills nodes from power-up to power-down: the job's
    // share of that time, boot and idle tail included.
    if (start == NodeStart::kBoots) use.boot = std::chrono::seconds(facts.boot_seconds);
    use.idle_tail = std::chrono::seconds(facts.idle_tail_seconds);
  }
  return cloud::ExpectedCost(use, *facts.price);
}

bool WholeNodePartition(const cluster::Description& description, const std::string& partition) {
  const cluster::Partition* p = description.FindPartition(partition);
  return p != nullptr && p->exclusive;
}

std::optional<double> BootedNodesAddedCost(const ElasticFacts& facts,
                                           const cluster::Description& description,
                                           const std::string& partition, std::int64_t nodes,
                                           std::int64_t job_gpus_per_node, std::int64_t minutes) {
  if (!facts.price) return std::nullopt;
  const double whole_nodes = static_cast<double>(std::max<std::int64_t>(nodes, 1));
  const double fixed_s = static_cast<double>(facts.boot_seconds + facts.idle_tail_seconds);
  const double run_s = static_cast<double>(minutes) * 60;
  return cloud::NodeTimeCost(whole_nodes * fixed_s,
                             static_cast<int>(GpusPerNode(description, partition)), *facts.price) +
         cloud::NodeTimeCost(whole_nodes * run_s, static_cast<int>(job_gpus_per_node),
                             *facts.price);
}

WaitingWorkGain GainOfWaitingWork(const ElasticFacts& facts,
                                  const cluster::Description& description,
                                  const std::string& partition, std::int64_t nodes,
                                  std::int64_t job_gpus_per_node, std::int64_t minutes,
                                  std::int64_t waiting_gpus, double fixed_wait_s,
                                  double boot_wait_s, double wait_worth_per_gpu_hour) {
  WaitingWorkGain gain;
  const std::int64_t rest =
      (GpusPerNode(description, partition) - job_gpus_per_node) * std::max<std::int64_t>(nodes, 1);
  if (!facts.price || rest <= 0 || waiting_gpus < rest) return gain;
  gain.gpus = rest;
  // The rest GPUs nearest the back of the work ahead of the job: those the
  // moves take first (the longer a job's wait, the more a move saves it).
  const double their_wait =
      fixed_wait_s * (1.0 - static_cast<double>(rest) / (2.0 * static_cast<double>(waiting_gpus)));
  gain.spared_s = std::max(0.0, their_wait - boot_wait_s);
  gain.wait_worth = static_cast<double>(rest) * gain.spared_s / 3600.0 * wait_worth_per_gpu_hour;
  gain.run_cost =
      cloud::NodeTimeCost(static_cast<double>(minutes) * 60, static_cast<int>(rest), *facts.price);
  return gain;
}

std::vector<std::time_t> NodesKeptUpUntil(const std::vector<cluster::QueuedJob>& jobs,
                                          std::string_view nodes) {
  auto names = cluster::ExpandHostlist(nodes);
  if (!names.ok()) return {};
  std::vector<std::time_t> until(names->size(), 0);
  for (const cluster::QueuedJob& j : jobs) {
    // A completing job lets its node go; a pending one holds none yet.
    if (j.phase != cluster::JobPhase::kRunning || j.nodelist.empty()) continue;
    auto held = cluster::ExpandHostlist(j.nodelist);
    if (!held.ok()) continue;
    for (std::size_t i = 0; i < names->size(); ++i) {
      if (std::find(held->begin(), held->end(), (*names)[i]) != held->end()) {
        until[i] = std::max(until[i], j.end_time);
      }
    }
  }
  return until;
}

std::optional<double> AddedNodeCost(const ElasticFacts& facts,
                                    const cluster::Description& description,
                                    const std::string& partition,
                                    const std::vector<std::time_t>& kept_up_until,
                                    std::time_t job_end) {
  if (!facts.price || kept_up_until.empty()) return std::nullopt;
  double node_seconds = 0;
  for (std::time_t until : kept_up_until) {
    if (until <= 0) return std::nullopt;
    node_seconds += static_cast<double>(std::max<std::time_t>(0, job_end - until));
  }
  return node_seconds / 3600 * static_cast<double>(GpusPerNode(description, partition)) *
         *facts.price;
}

}  // namespace skyslurm::place
