#include "broker/place/planner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "broker/place/certain_start.h"
#include "broker/place/start_estimate.h"
#include "broker/translate/gpus.h"
#include "broker/util/acting_user.h"
#include "broker/util/trace.h"

namespace skyslurm::place {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<std::size_t> g_tasks_running{0};

// Runs tasks on their own threads and waits for them until a deadline; a
// task still running then is abandoned (its thread finishes on its own and
// its result is dropped), so one stuck cluster never stalls the answer.
template <typename T>
class Gather {
 public:
  explicit Gather(std::size_t n) : state_(std::make_shared<State>(n)) {}

  void Start(std::size_t i, std::function<T()> task) {
    ++g_tasks_running;
    std::thread([state = state_, i, task = std::move(task), trace = trace::Current(),
                 working_for = WorkingFor::Current()]() mutable {
      std::optional<T> value;
      {
        trace::Install adopt(std::move(trace), true);
        // A site's daemon: the user it works for, here too (util/acting_user.h).
        WorkingForScope same_user(working_for);
        value = task();
        // What the task holds (a share of its backend, which may be the
        // last one) is released before the waiter is woken: once it is, the
        // process may exit, and a backend torn down by this thread while
        // exit() destroys the libraries' statics crashes the command after
        // its answer was printed (seen in CI: explain killed by a signal).
        task = nullptr;
      }
      std::lock_guard<std::mutex> lock(state->mu);
      state->results[i] = std::move(value);
      ++state->done;
      --g_tasks_running;
      state->cv.notify_all();
    }).detach();
  }

  // The results, with nullopt for tasks that did not finish in time.
  std::vector<std::optional<T>> Wait(Clock::time_point deadline, std::size_t started) {
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->cv.wait_until(lock, deadline, [&] { return state_->done >= started; });
    return state_->results;
  }

 private:
  struct State {
    explicit State(std::size_t n) : results(n) {}
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::optional<T>> results;
    std::size_t done = 0;
  };
  std::shared_ptr<State> state_;
};

struct ProbeOutcome {
  Result<cluster::Inventory> inventory = InternalError("not probed");
  std::chrono::milliseconds took{0};
};

}  // namespace

std::int64_t JobMinutes(const job::Request& r, const cluster::Description& d,
                        const std::string& partition) {
  if (r.time_limit && r.time_limit->minutes) return *r.time_limit->minutes;
  if (const cluster::Partition* p = d.FindPartition(partition)) {
    if (p->default_time_minutes) return *p->default_time_minutes;
    if (p->max_time_minutes) return *p->max_time_minutes;
  }
  return 60;
}

std::size_t TasksStillRunning() { return g_tasks_running.load(); }

std::vector<ClusterResult> ProbeAll(const std::vector<ClusterHandle>& clusters,
                                    std::chrono::milliseconds timeout) {
  std::vector<ClusterResult> results(clusters.size());
  Gather<ProbeOutcome> probes(clusters.size());
  // Answered from what the backend holds, on this thread (no thread each).
  std::vector<std::optional<ProbeOutcome>> at_once(clusters.size());
  std::size_t started = 0;
  auto skipped = [](const ClusterHandle& c) { return !c.excluded.empty(); };
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    const ClusterHandle& c = clusters[i];
    // Known to be unreachable (skyslurmd: a dead cluster): not asked again.
    if (skipped(c) || !c.unavailable.empty() || c.backend == nullptr) continue;
    backend::Backend* b = c.backend;
    {
      trace::Span probing("probe " + b->name());
      const auto t0 = Clock::now();
      if (auto held = b->ProbeAtOnce()) {
        at_once[i] =
            ProbeOutcome{std::move(*held),
                         std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0)};
        continue;
      }
      probing.Cancel();
    }
    probes.Start(i, [b, owner = c.backend_owner, timeout] {
      trace::Span probing("probe " + b->name());
      const auto t0 = Clock::now();
      ProbeOutcome o;
      o.inventory = b->Probe(timeout);
      o.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
      return o;
    });
    ++started;
  }
  // A little beyond the deadline: each probe keeps its own.
  auto probed = probes.Wait(Clock::now() + timeout + std::chrono::milliseconds(500), started);
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    if (at_once[i]) probed[i] = std::move(at_once[i]);
  }
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    const ClusterHandle& c = clusters[i];
    ClusterResult& r = results[i];
    r.name = c.name;
    if (skipped(c)) continue;
    if (c.backend == nullptr || !c.unavailable.empty()) {
      if (c.offline && c.unavailable.empty()) {
        cluster::Inventory inv;
        inv.description = *c.offline;
        r.inventory = std::move(inv);
      } else {
        r.unreachable = c.unavailable.empty() ? "no way to reach it" : c.unavailable;
      }
      continue;
    }
    if (!probed[i]) {
      r.unreachable = fmt::format("no answer within {} s", timeout.count() / 1000);
      continue;
    }
    r.probe_took = probed[i]->took;
    if (probed[i]->inventory.ok()) {
      r.inventory = std::move(*probed[i]->inventory);
    } else {
      r.unreachable = probed[i]->inventory.status().message();
    }
  }
  return results;
}

namespace {

// What the estimate took the jobs ahead to run, when it learned that from
// the jobs lately ended there.
std::string LimitUseBasis(const cluster::LimitUse& use) {
  if (use.JobsBehind("") == 0) {
    return fmt::format(
        ", jobs taken to run their whole time limits (fewer than {} lately ended "
        "there to learn from)",
        cluster::LimitUse::kFewest);
  }
  return fmt::format(
      ", each job taken to run the share of its time limit its user's jobs of that "
      "limit lately ended there ran (all {} together: {}%)",
      use.JobsBehind(""), std::lround(use.ShareOf("") * 100));
}

// A candidate's start from its cluster's answer (sbatch --test-only, or
// certain from the last look), moved later by the work pending ahead.
void ApplyEstimate(Plan& plan, std::size_t candidate, std::size_t cluster,
                   const backend::StartEstimate& answer, bool certain, const job::Request& request,
                   const catalog::AcceleratorCatalog& catalog) {
  Candidate& cand = plan.candidates[candidate];
  const cluster::Inventory& inv = *plan.clusters[cluster].inventory;
  const std::string partition = answer.partition.empty() ? cand.partition : answer.partition;
  EstimateInput in;
  in.now = plan.now;
  in.test_only_start = answer.start;
  in.partitions = OverlappingPartitions(inv.description, partition);
  // The GPU type as this cluster spells it.
  in.gpus = request.gpu_demand.total;
  if (const std::string& asked = request.gpu_demand.type; !asked.empty()) {
    for (const auto& [type, count] : translate::GpuTypesOf(inv.description)) {
      if (type == asked || catalog.Same(type, asked)) in.gpu_type = type;
    }
  }
  in.minutes = JobMinutes(request, inv.description, partition);
  in.nodes = GpuNodes(inv.description, partition, in.gpu_type);
  for (const NodeGpus& n : in.nodes) in.capacity += n.gpus;
  in.job_nodes = request.nodes ? std::max<std::int64_t>(request.nodes->min, 1) : 1;
  if (plan.run_times_from_history) in.limit_use = &inv.limit_use;
  if (plan.pending_copy && plan.pending_copy->cluster == cand.cluster) {
    in.own_job_id = plan.pending_copy->job_id;
  } else if (plan.lay_out_array_tasks && request.array_indices) {
    in.tasks = static_cast<std::int64_t>(request.array_indices->indices.size());
  }
  if (answer.counts_work_ahead) {
    cand.start = answer.start;
    cand.start_basis = answer.basis;
  } else {
    AdjustedEstimate adjusted = AccountForPendingWork(in, inv.jobs, catalog);
    cand.start = adjusted.start;
    cand.task_starts = std::move(adjusted.task_starts);
    cand.pending_gpus_ahead = adjusted.pending_gpus;
    if (adjusted.own_found) {
      cand.gpus_queued_behind = adjusted.gpus_behind;
      if (in.capacity > 0) {
        cand.holds_those_behind_s =
            static_cast<double>(adjusted.own_run_s) *
            std::min(1.0, static_cast<double>(in.gpus) / static_cast<double>(in.capacity));
      }
      cand.start_basis = fmt::format(
          "its place in the queue there: behind {} pending job(s) wanting {} GPU(s); {} job(s) "
          "wanting {} GPU(s) behind it",
          adjusted.pending_ahead, adjusted.pending_gpus, adjusted.pending_behind,
          adjusted.gpus_behind);
    } else if (certain || (!adjusted.moved && !adjusted.earlier)) {
      cand.start_basis = answer.basis;
    } else if (adjusted.moved) {
      cand.start_basis = fmt::format("{}, then {} pending job(s) ahead wanting {} GPU(s)",
                                     answer.basis, adjusted.pending_ahead, adjusted.pending_gpus);
    } else if (adjusted.pending_ahead == 0) {
      cand.start_basis = fmt::format("its GPUs free as the running jobs {} ({} said {})",
                                     in.limit_use != nullptr ? "end" : "reach their time limits",
                                     answer.basis, FormatWait(answer.start, plan.now));
    } else {
      // Slurm's plan keeps a whole node for each pending job it plans.
      cand.start_basis = fmt::format(
          "the GPUs of its nodes, laid out behind {} pending job(s) ahead wanting {} GPU(s) "
          "({} said {}, keeping a whole node for each)",
          adjusted.pending_ahead, adjusted.pending_gpus, answer.basis,
          FormatWait(answer.start, plan.now));
    }
    if (in.limit_use != nullptr && !certain && (adjusted.moved || adjusted.earlier)) {
      cand.start_basis += LimitUseBasis(inv.limit_use);
    }
  }
  // An elastic cluster's scheduler counts a powered-down node as free: its
  // boot comes first, unless the nodes it names are up already (or booting
  // for jobs placed there before).
  const ElasticFacts& facts = plan.elastic[candidate];
  std::time_t booted = 0;  // a boot comes first: not before this
  if (facts.elastic && !certain) {
    const NodeStart start = NodeStartOn(inv.description, answer.nodes);
    plan.node_start[candidate] = start;
    if (start == NodeStart::kShares || start == NodeStart::kSharesBooting) {
      plan.kept_up_until[candidate] = NodesKeptUpUntil(inv.jobs, answer.nodes);
    }
    if (start == NodeStart::kBoots || start == NodeStart::kSharesBooting) {
      // A node booting for others is known to be ready only by its boot.
      booted = plan.now + facts.boot_seconds;
      if (*cand.start < booted) cand.start = booted;
    }
    switch (start) {
      case NodeStart::kBoots:
        cand.start_basis +=
            fmt::format(", a node's boot first ({} s; {})", facts.boot_seconds, facts.boot_basis);
        break;
      case NodeStart::kIdleUp:
        cand.start_basis += ", on a node already up";
        break;
      case NodeStart::kShares:
        cand.start_basis += ", beside jobs on a node already up (billed anyway)";
        break;
      case NodeStart::kSharesBooting:
        cand.start_basis += fmt::format(
            ", beside jobs on a node booting for them (billed anyway; ready within {} s)",
            facts.boot_seconds);
        break;
    }
  }
  // How this cluster's estimates lately came true (estimates: calibrated);
  // a boot still comes first.
  if (auto scale = plan.estimate_scales.find(cand.cluster);
      !certain && scale != plan.estimate_scales.end() && *cand.start > plan.now) {
    cand.model_start = cand.start;
    cand.start = std::max(ScaledStart(*cand.start, plan.now, scale->second), booted);
    cand.start_basis += fmt::format(
        ", its wait taken at {}% (the real waits of the last {} jobs placed there over their "
        "estimates)",
        std::lround(scale->second.factor * 100), scale->second.jobs);
  }
  // An array's tasks wait for what the first waits for (Slurm's answer, a
  // boot, the calibration): each later by as much.
  if (!cand.task_starts.empty() && *cand.start > cand.task_starts.front()) {
    const std::time_t later = *cand.start - cand.task_starts.front();
    for (std::time_t& t : cand.task_starts) t += later;
  }
}

// What a job on an elastic cluster is billed: what Slurm allocates it.
std::string WhatIsBilled(const job::Request& request, bool whole, bool fills_nodes) {
  if (whole) {
    return request.exclusive ? "whole nodes (--exclusive)"
                             : "whole nodes (OverSubscribe=EXCLUSIVE)";
  }
  if (fills_nodes) return "whole nodes (its GPUs fill them)";
  return "its GPUs' share of the nodes (the rest is the partition's to share)";
}

// The candidate's expected cost for the job's time limit (its partition's
// price; none when it has none).
void PriceCandidate(Plan& plan, std::size_t candidate, std::size_t cluster,
                    const job::Request& request, const Policy& policy) {
  const std::string_view currency = policy.currency;
  Candidate& cand = plan.candidates[candidate];
  const cluster::Description& d = plan.clusters[cluster].inventory->description;
  // Every component of a heterogeneous job is billed.
  std::int64_t nodes = 0;
  cand.gpus = 0;
  for (std::size_t k = 0; k < request.ComponentCount(); ++k) {
    const job::Request& c = request.Component(k);
    nodes += c.nodes ? std::max<std::int64_t>(c.nodes->min, 1) : 1;
    cand.gpus += c.gpu_demand.total;
  }
  const NodeStart start = plan.node_start[candidate];
  // The jobs waiting on the cluster that would otherwise run it: when they
  // fill the rest of the nodes it boots, they share the bill (a burst).
  const Candidate* fixed = nullptr;
  for (std::size_t i = 0; i < plan.candidates.size(); ++i) {
    const Candidate& c = plan.candidates[i];
    if (plan.elastic[i].elastic || !c.start || !c.excluded.empty() || !c.unreachable.empty() ||
        !c.infeasible.empty()) {
      continue;
    }
    if (fixed == nullptr || *c.start < *fixed->start) fixed = &c;
  }
  const bool filled =
      plan.elastic[candidate].elastic && fixed != nullptr &&
      (start == NodeStart::kBoots || start == NodeStart::kIdleUp) &&
      WaitingWorkFillsNodes(d, cand.partition, nodes, cand.gpus / nodes, fixed->pending_gpus_ahead);
  const std::int64_t minutes = JobMinutes(request, d, cand.partition);
  const bool whole_nodes = request.exclusive.has_value() || WholeNodePartition(d, cand.partition);
  const bool fills_nodes = cand.gpus > 0 && cand.gpus / nodes >= GpusPerNode(d, cand.partition);
  cand.cost = ExpectedJobCost(plan.elastic[candidate], d, cand.partition, nodes, cand.gpus / nodes,
                              minutes, start, whole_nodes);
  // Beside jobs that keep the nodes up anyway, its share is what it is
  // billed, not what it adds: what overflow.worth weighs is the latter, up
  // to its share (node time past the jobs there is shared by the jobs that
  // come after it, as a burst's boot is).
  cand.added_cost.reset();
  std::string added;
  if (cand.cost && cand.start &&
      (start == NodeStart::kShares || start == NodeStart::kSharesBooting)) {
    const std::time_t job_end = *cand.start + static_cast<std::time_t>(minutes) * 60;
    const auto adds = AddedNodeCost(plan.elastic[candidate], d, cand.partition,
                                    plan.kept_up_until[candidate], job_end);
    if (adds && *adds < 0.005) {
      cand.added_cost = 0.0;
      added = "; it adds nothing to the bill: the jobs there keep the node up past its time limit";
    } else if (adds && *adds < *cand.cost) {
      cand.added_cost = *adds;
      std::time_t past = 0;
      for (std::time_t until : plan.kept_up_until[candidate]) {
        past = std::max<std::time_t>(past, job_end - until);
      }
      added =
          fmt::format("; it adds {} to the bill: its node up {} past the jobs there",
                      FormatCost(*adds, currency), FormatWait(plan.now + past, plan.now).substr(3));
    }
  } else if (cand.cost && !whole_nodes && !filled && plan.elastic[candidate].elastic &&
             (start == NodeStart::kBoots || start == NodeStart::kIdleUp)) {
    // Billed its share, but the nodes it boots (or keeps up) are billed
    // whole until other jobs come: that is what it adds to the bill.
    cand.added_cost = ExpectedJobCost(plan.elastic[candidate], d, cand.partition, nodes,
                                      cand.gpus / nodes, minutes, start, true);
    if (cand.added_cost && *cand.added_cost > *cand.cost + 0.005) {
      added = fmt::format("; {} them adds {} to the bill: the nodes whole until other jobs come",
                          start == NodeStart::kBoots ? "booting" : "keeping up",
                          FormatCost(*cand.added_cost, currency));
    }
  } else if (cand.cost && filled && start == NodeStart::kBoots) {
    // The bill shares the boot and idle tail, but booting the nodes causes
    // them: weighed whole, an on-demand node is not opened for a short job
    // that spot would start a little later, its cost then carried by the
    // jobs that join it. But the nodes are opened for the waiting work that
    // fills them: what those jobs gain over their runs' bill is taken off
    // (never below its share): weighed job by job, a node opened only when
    // one job's wait alone paid for its boot.
    cand.added_cost = BootedNodesAddedCost(plan.elastic[candidate], d, cand.partition, nodes,
                                           cand.gpus / nodes, minutes);
    if (cand.added_cost) {
      added = fmt::format(
          "; booting them adds {} to the bill: their boot and idle tail whole, and its GPUs for "
          "its run",
          FormatCost(*cand.added_cost, currency));
      if (policy.wait_worth && cand.start && fixed->start) {
        const WaitingWorkGain gain = GainOfWaitingWork(
            plan.elastic[candidate], d, cand.partition, nodes, cand.gpus / nodes, minutes,
            fixed->pending_gpus_ahead, static_cast<double>(*fixed->start - plan.now),
            static_cast<double>(std::max<std::time_t>(*cand.start - plan.now, 0)),
            *policy.wait_worth);
        if (gain.Net() > 0.005) {
          const double whole = *cand.added_cost;
          cand.added_cost = std::max(*cand.cost, whole - gain.Net());
          added += fmt::format(
              "; weighed at {}{}: less what the {} GPU(s) waiting just ahead of it on {} that "
              "fill the rest gain (about {} sooner each, worth {} at overflow.worth over {} for "
              "their runs)",
              FormatCost(*cand.added_cost, currency),
              whole - gain.Net() <= *cand.cost ? " (its share)" : "", gain.gpus, fixed->cluster,
              FormatWait(plan.now + std::lround(gain.spared_s), plan.now).substr(3),
              FormatCost(gain.wait_worth, currency), FormatCost(gain.run_cost, currency));
        }
      }
    }
  }
  if (!plan.elastic[candidate].elastic) {
    cand.cost_basis = "its GPUs at the cluster's rate";
  } else if (filled) {
    cand.cost_basis = fmt::format(
        "its GPUs' share of {} node time, boot and idle tail included: {} GPU(s) waiting on {} "
        "fill the rest{}",
        start == NodeStart::kBoots ? "the booted" : "the", fixed->pending_gpus_ahead,
        fixed->cluster, added);
  } else if (start == NodeStart::kBoots) {
    cand.cost_basis = fmt::format("{}, boot and idle tail included{}",
                                  WhatIsBilled(request, whole_nodes, fills_nodes), added);
  } else if (start == NodeStart::kIdleUp) {
    cand.cost_basis = fmt::format("{}, on a node already up, idle tail included{}",
                                  WhatIsBilled(request, whole_nodes, fills_nodes), added);
  } else {
    cand.cost_basis = "its GPUs' share of a node others keep up" + added;
  }
}

}  // namespace

void CompleteDeferredEstimate(Plan& plan, const Result<backend::StartEstimate>& answer,
                              const job::Request& request,
                              const catalog::AcceleratorCatalog& catalog, const Policy& policy) {
  if (!plan.deferred) return;
  const std::size_t chosen = plan.deferred->candidate;
  Candidate& cand = plan.candidates[chosen];
  if (answer.ok()) {
    ApplyEstimate(plan, chosen, plan.deferred->cluster, *answer, false, request, catalog);
    cand.start_basis += ", with the submission";
    // Priced before the estimate said whether nodes boot: again.
    if (cand.cost) PriceCandidate(plan, chosen, plan.deferred->cluster, request, policy);
    plan.decision = Place(plan.candidates, policy, plan.now);
    return;
  }
  // Submitted all the same: the only cluster that can run it.
  cand.start.reset();
  cand.start_basis = "";
  cand.no_estimate = answer.status().message();
  Verdict& v = plan.decision.verdicts[chosen];
  v.start.reset();
  v.reason =
      fmt::format("the only cluster that can run it (no start estimate: {})", cand.no_estimate);
  plan.decision.summary = fmt::format("{}{}: {}", cand.cluster,
                                      cand.partition.empty() ? "" : "/" + cand.partition, v.reason);
}

namespace {

// A candidate's estimate to make: the candidate's index and its cluster's.
struct EstimateTask {
  std::size_t candidate;
  std::size_t cluster;
};

// Who is a candidate at all: --sky-infra and --sky-any-cluster's list.
void ExcludeUnasked(std::vector<ClusterHandle>& clusters, const PlanOptions& options) {
  for (ClusterHandle& c : clusters) {
    if (c.excluded.empty() && !options.pinned.empty() && c.name != options.pinned) {
      c.excluded = fmt::format("--sky-infra={} pins another cluster", options.pinned);
    }
    if (c.excluded.empty() && !options.only.empty() &&
        std::find(options.only.begin(), options.only.end(), c.name) == options.only.end()) {
      c.excluded = fmt::format("not in --sky-any-cluster={}", fmt::join(options.only, ","));
    }
  }
}

// What the script was written against and where it is translated to.
class Contexts {
 public:
  // The home's modules, when known, and the home's filesystems.
  Contexts(const Plan& plan, const std::vector<ClusterHandle>& clusters,
           const catalog::AcceleratorCatalog& catalog, const std::string& home)
      : catalog_(catalog), home_(home) {
    for (std::size_t i = 0; i < clusters.size(); ++i) {
      const auto& inv = plan.clusters[i].inventory;
      if (clusters[i].home && inv && inv->description.modules_known) {
        home_modules_ = &inv->description.modules;
      }
      if (clusters[i].home) home_roots_ = &clusters[i].roots;
    }
  }
  translate::TranslateContext For(const ClusterHandle& c, const std::string& partition) const {
    translate::TranslateContext ctx{home_, &catalog_, &c.settings, partition, home_modules_};
    ctx.home_roots = home_roots_;
    ctx.target_roots = &c.roots;
    ctx.rewrite_script_paths = c.rewrite_script_paths;
    return ctx;
  }

 private:
  const catalog::AcceleratorCatalog& catalog_;
  const std::string& home_;
  const std::vector<std::string>* home_modules_ = nullptr;
  const translate::PathRoots* home_roots_ = nullptr;
};

void AddCandidate(Plan& plan, Candidate cand, std::optional<translate::TranslatedJob> job,
                  ElasticFacts facts) {
  plan.candidates.push_back(std::move(cand));
  plan.jobs.push_back(std::move(job));
  plan.elastic.push_back(std::move(facts));
  plan.node_start.push_back(NodeStart::kIdleUp);
  plan.kept_up_until.emplace_back();
}

// The provider's ledger, where the cluster names one: its boots measured.
struct Ledger {
  std::optional<std::vector<cloud::PowerUp>> power_ups;
  std::string error;  // why it was not read
};
Ledger LedgerOf(const ClusterHandle& c) {
  Ledger ledger;
  if (c.settings.ledger.empty()) return ledger;
  auto read = ReadLedger(c.settings.ledger);
  if (read.ok()) {
    ledger.power_ups = std::move(*read);
  } else {
    ledger.error = read.status().message();
  }
  return ledger;
}

// The candidates on a cluster that can run the job: the user's own
// partitions (Slurm picks among them) as one, a heterogeneous job's
// components (each in its translation's partitions) as one; otherwise each
// partition that can run it. Those to estimate and price are added to the lists.
void AddPartitions(const job::Request& request, std::size_t i, ClusterHandle& c,
                   const Candidate& base, const Contexts& contexts, const PlanOptions& options,
                   Plan& plan, std::vector<EstimateTask>& tasks,
                   std::vector<EstimateTask>& priced) {
  const ClusterResult& r = plan.clusters[i];
  const translate::TranslatedJob& job = *r.translation->job;
  const Ledger ledger = LedgerOf(c);
  const std::vector<std::string> partitions = request.partitions.empty() && !request.hetjob
                                                  ? job.fitting_partitions
                                                  : std::vector<std::string>{""};
  int rank = 0;
  for (const auto& p : partitions) {
    Candidate cand = base;
    cand.partition_rank = rank++;
    std::optional<translate::TranslatedJob> variant;
    if (p.empty() || (job.partitions.empty() && p == job.fitting_partitions.front())) {
      cand.partition = p.empty() ? fmt::format("{}", fmt::join(job.partitions, ",")) : p;
      variant = job;
    } else {
      auto t = c.translator->Translate(request, r.inventory->description, contexts.For(c, p));
      cand.partition = p;
      if (!t.ok()) {
        cand.infeasible = t.reasons;
      } else {
        variant = std::move(*t.job);
      }
    }
    if (cand.partition.empty()) {
      const cluster::Partition* d = r.inventory->description.DefaultPartition();
      cand.partition = d != nullptr ? d->name : "";
    }
    ElasticFacts facts = ElasticFactsOf(c.settings, r.inventory->description, cand.partition,
                                        ledger.power_ups ? &*ledger.power_ups : nullptr);
    if (facts.elastic && !ledger.error.empty()) {
      facts.boot_basis += fmt::format("; the ledger was not read: {}", ledger.error);
    }
    cand.elastic = facts.elastic;
    cand.spot = facts.spot;
    if (variant && !options.estimate) cand.no_estimate = "not estimated";
    if (variant && options.estimate && c.backend == nullptr) {
      cand.no_estimate = "offline description: no scheduler to ask";
    }
    const bool runs = variant.has_value();
    AddCandidate(plan, std::move(cand), std::move(variant), std::move(facts));
    if (runs) priced.push_back({plan.candidates.size() - 1, i});
    if (runs && options.estimate && c.backend != nullptr) {
      tasks.push_back({plan.candidates.size() - 1, i});
    }
  }
}

// Translates the job for each cluster and lists the candidates: one per
// partition that can run it, one with its reason for a cluster that cannot.
void ListCandidates(const job::Request& request, std::vector<ClusterHandle>& clusters,
                    const Contexts& contexts, const PlanOptions& options, Plan& plan,
                    std::vector<EstimateTask>& tasks, std::vector<EstimateTask>& priced) {
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    ClusterHandle& c = clusters[i];
    ClusterResult& r = plan.clusters[i];
    Candidate base;
    base.cluster = c.name;
    base.home = c.home;
    base.overflow = c.caps.overflow;
    base.preference = c.settings.preference;
    if (!c.excluded.empty()) {
      base.excluded = c.excluded;
    } else if (!r.inventory) {
      base.unreachable = r.unreachable;
    } else {
      r.translation =
          c.translator->Translate(request, r.inventory->description, contexts.For(c, ""));
      if (!r.translation->ok()) base.infeasible = r.translation->reasons;
    }
    if (base.excluded.empty() && base.unreachable.empty() && base.infeasible.empty()) {
      AddPartitions(request, i, c, base, contexts, options, plan, tasks, priced);
    } else {
      AddCandidate(plan, std::move(base), std::nullopt, {});
    }
  }
}

// The answers the cluster's last look makes certain (certain_start.h): not
// asked. Only for a scheduler that is asked (other kinds estimate from their
// own view), and not for the user's list (Slurm picks among it).
std::vector<std::optional<backend::StartEstimate>> CertainStarts(
    const job::Request& request, const std::vector<ClusterHandle>& clusters,
    const catalog::AcceleratorCatalog& catalog, const Plan& plan,
    const std::vector<EstimateTask>& tasks) {
  std::vector<std::optional<backend::StartEstimate>> certain(plan.candidates.size());
  if (!request.partitions.empty()) return certain;
  for (const auto& t : tasks) {
    const Candidate& cand = plan.candidates[t.candidate];
    if (clusters[t.cluster].caps.estimates != backend::Capabilities::Estimates::kScheduler) {
      continue;
    }
    if (auto why = StartsNowForCertain(request, *plan.clusters[t.cluster].inventory, cand.partition,
                                       catalog, plan.now)) {
      certain[t.candidate] = backend::StartEstimate{plan.now, cand.partition, "", *why};
    }
  }
  return certain;
}

// Each candidate's estimate: certain, answered from what the backend holds
// (the same job's estimate, a moment old) on this thread, or asked of each
// scheduler all at once (each backend asks its own way). Empty: no answer
// in time.
std::vector<std::optional<Result<backend::StartEstimate>>> AskEstimates(
    std::vector<ClusterHandle>& clusters, const PlanOptions& options, const Plan& plan,
    const std::vector<EstimateTask>& tasks,
    const std::vector<std::optional<backend::StartEstimate>>& certain) {
  Gather<Result<backend::StartEstimate>> estimates(plan.candidates.size());
  std::vector<std::optional<backend::StartEstimate>> at_once(plan.candidates.size());
  std::size_t asking = 0;
  for (const auto& t : tasks) {
    const bool deferred = plan.deferred && plan.deferred->candidate == t.candidate;
    if (certain[t.candidate] || deferred) continue;
    backend::Backend* b = clusters[t.cluster].backend;
    {
      trace::Span estimating("estimate " + b->name());
      if ((at_once[t.candidate] = b->EstimateAtOnce(*plan.jobs[t.candidate]))) continue;
      estimating.Cancel();
    }
    ++asking;
    // The thread owns its copy of the job and a share of the backend: it may
    // outlive this call, and the caller's workspace, when it is late.
    auto job = std::make_shared<const translate::TranslatedJob>(*plan.jobs[t.candidate]);
    const auto timeout = options.estimate_timeout;
    estimates.Start(t.candidate, [b, owner = clusters[t.cluster].backend_owner, job, timeout] {
      trace::Span estimating("estimate " + b->name());
      return b->EstimateStart(*job, timeout);
    });
  }
  auto answers = estimates.Wait(
      Clock::now() + options.estimate_timeout + std::chrono::milliseconds(500), asking);
  for (std::size_t i = 0; i < certain.size(); ++i) {
    if (certain[i]) answers[i] = *certain[i];
    if (at_once[i]) answers[i] = *at_once[i];
  }
  return answers;
}

// Each estimated candidate's start, from its answer (or why it has none).
void ApplyEstimates(const job::Request& request, const catalog::AcceleratorCatalog& catalog,
                    const PlanOptions& options, const std::vector<EstimateTask>& tasks,
                    const std::vector<std::optional<backend::StartEstimate>>& certain,
                    const std::vector<std::optional<Result<backend::StartEstimate>>>& answers,
                    Plan& plan) {
  for (const auto& t : tasks) {
    Candidate& cand = plan.candidates[t.candidate];
    if (plan.deferred && plan.deferred->candidate == t.candidate) {
      // Provisional, so that it is chosen: the submission asks.
      cand.start = plan.now;
      cand.start_basis = "asked with the submission";
      continue;
    }
    const auto& answer = answers[t.candidate];
    if (!answer) {
      cand.no_estimate =
          fmt::format("no estimate within {} s", options.estimate_timeout.count() / 1000);
      continue;
    }
    if (!answer->ok()) {
      // The scheduler refused the job (backend.h): it cannot run there.
      if (answer->status().code() == StatusCode::kFailedPrecondition) {
        cand.infeasible.push_back(answer->status().message());
      } else {
        cand.no_estimate = answer->status().message();
      }
      continue;
    }
    ApplyEstimate(plan, t.candidate, t.cluster, **answer, certain[t.candidate].has_value(), request,
                  catalog);
  }
}

}  // namespace

Plan MakePlan(const job::Request& request, std::vector<ClusterHandle>& clusters,
              const catalog::AcceleratorCatalog& catalog, const std::string& home,
              const PlanOptions& options) {
  const auto started = Clock::now();
  trace::Span span("plan");
  Plan plan;
  plan.now = options.now != 0 ? options.now : std::time(nullptr);
  plan.run_times_from_history = options.policy.run_times_from_history;
  plan.lay_out_array_tasks = options.lay_out_array_tasks;
  plan.estimate_scales = options.policy.estimate_scales;
  plan.pending_copy = options.pending_copy;
  ExcludeUnasked(clusters, options);
  plan.clusters = ProbeAll(clusters, options.probe_timeout);

  std::vector<EstimateTask> tasks;   // candidates whose scheduler is asked
  std::vector<EstimateTask> priced;  // every candidate that can run it
  const Contexts contexts(plan, clusters, catalog, home);
  ListCandidates(request, clusters, contexts, options, plan, tasks, priced);

  const auto certain = CertainStarts(request, clusters, catalog, plan, tasks);
  if (options.estimate_with_submission && tasks.size() == 1 && !certain[tasks[0].candidate]) {
    // The only candidate: chosen whatever its estimate, which is asked
    // with the submission instead (PlanOptions::estimate_with_submission).
    plan.deferred = Plan::DeferredEstimate{tasks[0].candidate, tasks[0].cluster};
  }
  const auto answers = AskEstimates(clusters, options, plan, tasks, certain);
  ApplyEstimates(request, catalog, options, tasks, certain, answers, plan);
  for (const auto& t : priced) {
    PriceCandidate(plan, t.candidate, t.cluster, request, options.policy);
  }
  plan.decision = Place(plan.candidates, options.policy, plan.now);
  plan.took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return plan;
}

}  // namespace skyslurm::place
