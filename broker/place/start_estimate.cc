#include "broker/place/start_estimate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "broker/cluster/hostlist.h"

namespace skyslurm::place {

std::set<std::string> OverlappingPartitions(const cluster::Description& d,
                                            const std::string& partition) {
  std::set<std::string> out = {partition};
  const cluster::Partition* p = d.FindPartition(partition);
  if (p == nullptr) return out;
  for (const auto& other : d.partitions) {
    for (const auto& n : other.nodes) {
      if (std::find(p->nodes.begin(), p->nodes.end(), n) != p->nodes.end()) {
        out.insert(other.name);
        break;
      }
    }
  }
  return out;
}

std::vector<NodeGpus> GpuNodes(const cluster::Description& d, const std::string& partition,
                               const std::string& type) {
  std::vector<NodeGpus> out;
  const cluster::Partition* p = d.FindPartition(partition);
  if (p == nullptr) return out;
  for (const cluster::Node* n : d.NodesOf(*p)) {
    // A powered-down node of an elastic cluster runs jobs once booted.
    if (!n->usable() && !n->bootable()) continue;
    std::int64_t gpus = 0;
    for (const auto& g : n->gres) {
      if (g.name == "gpu" && (type.empty() || g.type == type)) gpus += g.count;
    }
    if (gpus > 0) out.push_back({n->name, gpus});
  }
  return out;
}

std::int64_t GpuCapacity(const cluster::Description& d, const std::string& partition,
                         const std::string& type) {
  std::int64_t total = 0;
  for (const NodeGpus& n : GpuNodes(d, partition, type)) total += n.gpus;
  return total;
}

namespace {

// The GPUs of the job's nodes over time: what each node holds, when.
class GpuLayout {
 public:
  GpuLayout(const std::vector<NodeGpus>& nodes, std::time_t now) : now_(now) {
    for (const NodeGpus& n : nodes) {
      index_.emplace(n.name, lines_.size());
      lines_.push_back({n.gpus, {}});
    }
  }

  std::optional<std::size_t> LineOf(const std::string& node) const {
    auto it = index_.find(node);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }

  void Hold(std::size_t line, std::time_t from, std::time_t to, std::int64_t gpus) {
    Line& l = lines_[line];
    if (l.uses.empty()) busy_.push_back(line);
    l.uses.push_back({from, to, gpus});
    ends_.insert(to);
  }

  // The first moment from now at which `count` nodes each have `per_node`
  // GPUs free for `duration`; held there when `take`. nullopt: never (more
  // than the nodes have).
  std::optional<std::time_t> Fit(std::int64_t count, std::int64_t per_node, std::time_t duration,
                                 bool take) {
    // Nodes nothing holds fit at any moment: counted once.
    std::vector<std::size_t> idle;
    for (std::size_t i = 0; i < lines_.size() && static_cast<std::int64_t>(idle.size()) < count;
         ++i) {
      if (lines_[i].uses.empty() && lines_[i].gpus >= per_node) idle.push_back(i);
    }
    // The layout only fills up: a job of a shape laid out before starts no
    // earlier than it did (a queue of like jobs costs a pass, not a square).
    const Shape key{count, per_node, duration};
    const std::time_t from = std::max(now_, earliest_[key]);
    std::vector<std::size_t> chosen;
    auto fits_at = [&](std::time_t t) {
      chosen.clear();
      // Beside other jobs first, as Slurm packs nodes.
      for (std::size_t i : busy_) {
        if (static_cast<std::int64_t>(chosen.size()) == count) break;
        if (lines_[i].gpus - PeakUse(lines_[i], t, t + duration) >= per_node) chosen.push_back(i);
      }
      for (std::size_t i : idle) {
        if (static_cast<std::int64_t>(chosen.size()) == count) break;
        chosen.push_back(i);
      }
      return static_cast<std::int64_t>(chosen.size()) == count;
    };
    std::optional<std::time_t> start;
    if (fits_at(from)) {
      start = from;
    } else {
      for (auto it = ends_.upper_bound(from); it != ends_.end(); ++it) {
        if (fits_at(*it)) {
          start = *it;
          break;
        }
      }
    }
    if (!start) return std::nullopt;
    if (take) {
      earliest_[key] = *start;
      for (std::size_t i : chosen) Hold(i, *start, *start + duration, per_node);
    }
    return start;
  }

 private:
  struct Use {
    std::time_t from, to;
    std::int64_t gpus;
  };
  struct Line {
    std::int64_t gpus;
    std::vector<Use> uses;
  };
  using Shape = std::tuple<std::int64_t, std::int64_t, std::time_t>;

  // The most GPUs held on `l` at any moment of [from, to): one sweep over
  // the uses that overlap it.
  static std::int64_t PeakUse(const Line& l, std::time_t from, std::time_t to) {
    std::int64_t held = 0;
    std::vector<std::pair<std::time_t, std::int64_t>> changes;
    for (const Use& u : l.uses) {
      if (u.to <= from || u.from >= to) continue;
      if (u.from <= from) {
        held += u.gpus;
      } else {
        changes.emplace_back(u.from, u.gpus);
      }
      if (u.to < to) changes.emplace_back(u.to, -u.gpus);
    }
    // At one moment, what ends frees its GPUs before what starts takes them.
    std::sort(changes.begin(), changes.end());
    std::int64_t peak = held;
    for (const auto& [t, delta] : changes) {
      held += delta;
      peak = std::max(peak, held);
    }
    return peak;
  }

  std::time_t now_;
  std::vector<Line> lines_;
  std::map<std::string, std::size_t> index_;
  std::vector<std::size_t> busy_;  // lines something holds, in the order first held
  std::set<std::time_t> ends_;
  std::map<Shape, std::time_t> earliest_;
};

// Beyond this many pending jobs (array tasks each) ahead, the rest count as
// GPU-time spread over the partition: the layout's cost grows with the
// square of the work laid out.
constexpr std::int64_t kMostLaidOut = 2000;

// The furthest ahead Slurm's backfill plans a job (bf_window's largest value,
// 43200 minutes); a start further out is none of its plans.
constexpr std::time_t kLongestSlurmPlan = 30 * 24 * 3600;
// How late Slurm's --test-only answers while an array's tasks wait for its
// own task limit: its minute, and the answer's way from a busy controller
// (now is taken before the question; the testbed's took seconds under load).
constexpr std::time_t kTaskLimitDelay = 90;
// A pending job submitted this recently may not have been passed over by
// the scheduler yet (skyslurmd's own, just sent in a burst).
constexpr std::time_t kJustSent = 10;

}  // namespace

namespace {

// A job's nodes and GPUs per node, as the layout holds them.
struct NodeShape {
  std::int64_t nodes;
  std::int64_t per_node;
};

// The queue laid over the partition's GPUs: the running jobs hold theirs
// until they end, the pending ones take theirs in Slurm's order.
class PendingWork {
 public:
  PendingWork(const EstimateInput& in, const catalog::AcceleratorCatalog& catalog)
      : in_(in),
        catalog_(catalog),
        pooled_(in.nodes.empty()),
        // Nodes unknown: the partition's GPUs as one pool, each job's from it.
        layout_(pooled_ ? std::vector<NodeGpus>{{"", in.capacity}} : in.nodes, in.now) {}

  // Whether a queued job weighs on this one: GPUs of its type, in a
  // partition sharing nodes (a job in several, "a,b", when any of them does).
  bool Relevant(const cluster::QueuedJob& j) const {
    if (j.TotalGpus() <= 0) return false;
    bool shares = false;
    std::size_t start = 0;
    while (start <= j.partition.size()) {
      auto end = j.partition.find(',', start);
      if (end == std::string::npos) end = j.partition.size();
      if (in_.partitions.contains(j.partition.substr(start, end - start))) shares = true;
      start = end + 1;
    }
    if (!shares) return false;
    return in_.gpu_type.empty() || j.gpu_type.empty() || j.gpu_type == in_.gpu_type ||
           catalog_.Same(j.gpu_type, in_.gpu_type);
  }

  NodeShape ShapeOf(std::int64_t nodes, std::int64_t per_node, std::int64_t total) const {
    nodes = std::max<std::int64_t>(nodes, 1);
    if (pooled_) return {1, total};
    return {nodes, per_node > 0 ? per_node : (total + nodes - 1) / nodes};
  }

  // The jobs holding GPUs (the probe's squeue lists pending and running jobs
  // only), each until its expected end.
  void HoldRunning(const std::vector<cluster::QueuedJob>& queue) {
    for (const auto& j : queue) {
      if (!Relevant(j) || !cluster::HasNodes(j.phase)) continue;
      const std::time_t end = ExpectedEnd(j);
      if (end <= in_.now) continue;
      const auto [nodes, per_node] = ShapeOf(j.nodes, j.gpus_per_node, j.TotalGpus());
      bool held = false;
      if (pooled_) {
        layout_.Hold(0, in_.now, end, per_node);
        held = true;
      } else if (auto names = cluster::ExpandHostlist(j.nodelist); names.ok() && !names->empty()) {
        // Its nodes outside the job's partition (one sharing some) do not count.
        for (const std::string& name : *names) {
          if (auto line = layout_.LineOf(name)) layout_.Hold(*line, in_.now, end, per_node);
        }
        held = true;
      }
      // Where it runs unknown: wherever it fits now.
      if (!held) (void)layout_.Fit(nodes, per_node, end - in_.now, true);
    }
  }

  // The jobs waiting to start, in the order Slurm's plan gives them (its
  // priority order; without a planned start, after the planned ones, as
  // submitted).
  std::vector<const cluster::QueuedJob*> Waiting(const std::vector<cluster::QueuedJob>& queue) {
    std::vector<const cluster::QueuedJob*> pending;
    for (const auto& j : queue) {
      if (!Relevant(j) || j.phase != cluster::JobPhase::kPending) continue;
      // Held by its user or an admin (priority 0): it starts when released,
      // never ahead of a job that can start. Tasks held back by their own
      // array's "%N" (JobArrayTaskLimit: as many of its tasks run as it
      // allows) start only as those end, on what they free: Slurm does not
      // weigh them for free GPUs, so they are not ahead either.
      if (j.reason == "JobArrayTaskLimit") task_limited_ = true;
      if (j.reason == "JobHeldUser" || j.reason == "JobHeldAdmin" ||
          j.reason == "JobArrayTaskLimit") {
        continue;
      }
      pending.push_back(&j);
    }
    std::stable_sort(pending.begin(), pending.end(), [](const auto* a, const auto* b) {
      const std::time_t never = std::numeric_limits<std::time_t>::max();
      const std::time_t sa = a->start_time > 0 ? a->start_time : never;
      const std::time_t sb = b->start_time > 0 ? b->start_time : never;
      if (sa != sb) return sa < sb;
      return a->submit_time < b->submit_time;
    });
    return pending;
  }

  // Lays out the waiting jobs ahead of this one, up to it when it is in the
  // queue (in_.own_job_id); counts those behind it.
  void LayOut(const std::vector<const cluster::QueuedJob*>& pending, AdjustedEstimate& out) {
    std::int64_t laid = 0;
    for (const cluster::QueuedJob* j : pending) {
      const std::int64_t minutes = j->time_limit_minutes > 0 ? j->time_limit_minutes : in_.minutes;
      const std::int64_t seconds = ExpectedRun(*j, minutes);
      const auto [nodes, per_node] = ShapeOf(j->nodes, j->gpus_per_node, j->TotalGpus());
      if (out.own_found) {
        // Behind the job: what its run holds back, not what holds it back.
        out.pending_behind += static_cast<int>(j->tasks);
        out.gpus_behind += j->TotalGpus() * j->tasks;
        continue;
      }
      if (!in_.own_job_id.empty() && j->job_id == in_.own_job_id) {
        out.own_found = true;
        out.own_run_s = seconds;
        own_planned_ = j->start_time;
        // Its own place in the queue: where it fits behind the jobs before
        // it (for its whole limit, as Slurm fits it).
        if (auto fit = layout_.Fit(nodes, per_node, minutes * 60, false)) {
          own_start_ = *fit + BacklogDelay();
        }
        continue;
      }
      if (j->submit_time <= 0 || in_.now - j->submit_time > kJustSent) all_ahead_just_sent_ = false;
      // A pending array's tasks each wait for their GPUs.
      for (std::int64_t t = 0; t < j->tasks; ++t) {
        if (laid++ < kMostLaidOut) {
          (void)layout_.Fit(nodes, per_node, seconds, true);
        } else {
          backlog_gpu_s_ += static_cast<double>(j->TotalGpus() * seconds);
        }
      }
      out.pending_ahead += static_cast<int>(j->tasks);
      out.pending_gpus += j->TotalGpus() * j->tasks;
    }
  }

  // A job already in the queue: its place there. Pending with its GPUs free
  // by the layout: the scheduler has not passed yet, or something else holds
  // it (CPUs, memory, a reservation, a limit). Slurm knows which: its plan
  // for the job (now, or when that other thing lets go), else its answer for
  // a new one. A start past the largest backfill window (bf_window at most
  // 30 days) is no plan of the backfill's, and is not taken as one.
  void SettleOwn(std::time_t floor, AdjustedEstimate& out) const {
    if (!own_start_) return;
    const bool planned = own_planned_ > 0 && own_planned_ - in_.now <= kLongestSlurmPlan;
    out.start = *own_start_ > in_.now ? *own_start_
                : planned             ? std::max(own_planned_, in_.now)
                                      : floor;
    out.moved = out.start > floor;
    out.earlier = out.start < floor;
  }

  // A new job: where it fits behind all that is laid out, its array's tasks
  // each after the one before.
  void SettleNew(std::time_t floor, AdjustedEstimate& out) {
    const auto [nodes, per_node] = ShapeOf(in_.job_nodes, 0, in_.gpus);
    std::optional<std::time_t> start = layout_.Fit(nodes, per_node, in_.minutes * 60, false);
    if (!start) return;  // more than the partition will ever have free: Slurm's answer stands
    *start += BacklogDelay();
    if (in_.tasks > 1) LayOutTasks({nodes, per_node}, *start, out);
    if (*start <= in_.now) {
      if (SlurmAnswersLate(floor, out)) {
        out.start = in_.now;
        out.earlier = true;
      }
      return;
    }
    out.start = *start;
    out.moved = *start > floor;
    out.earlier = *start < floor;
  }

 private:
  // When a running job ends: at its limit, or at its user's share of it
  // (in_.limit_use); one running past that ends within the same share of
  // what its limit leaves.
  std::time_t ExpectedEnd(const cluster::QueuedJob& j) const {
    std::time_t end = j.end_time > 0 ? j.end_time : j.start_time + j.time_limit_minutes * 60;
    if (end <= in_.now || in_.limit_use == nullptr || j.start_time <= 0 || end <= j.start_time) {
      return end;
    }
    const double share = in_.limit_use->ShareOf(j.user, j.time_limit_minutes);
    std::time_t expected =
        j.start_time + static_cast<std::time_t>(share * static_cast<double>(end - j.start_time));
    if (expected <= in_.now) {
      expected = in_.now + static_cast<std::time_t>(share * static_cast<double>(end - in_.now));
    }
    return std::clamp(expected, in_.now + 1, end);
  }

  // How long a pending job is expected to run, in seconds.
  std::int64_t ExpectedRun(const cluster::QueuedJob& j, std::int64_t minutes) const {
    if (in_.limit_use == nullptr) return minutes * 60;
    return std::max<std::int64_t>(
        1, std::llround(in_.limit_use->ShareOf(j.user, j.time_limit_minutes) *
                        static_cast<double>(minutes * 60)));
  }

  // The work past kMostLaidOut, as time over the partition's GPUs.
  std::time_t BacklogDelay() const {
    return static_cast<std::time_t>(backlog_gpu_s_ / static_cast<double>(in_.capacity));
  }

  // An array's tasks, each where the ones before it left room; past the
  // laid-out ones, one more every share of the partition's GPU time.
  void LayOutTasks(NodeShape shape, std::time_t start, AdjustedEstimate& out) {
    const std::int64_t laid_tasks = std::min(in_.tasks, kMostLaidOutTasks);
    out.task_starts.reserve(static_cast<std::size_t>(in_.tasks));
    for (std::int64_t t = 0; t < laid_tasks; ++t) {
      auto at = layout_.Fit(shape.nodes, shape.per_node, in_.minutes * 60, true);
      if (!at) break;
      out.task_starts.push_back(*at + BacklogDelay());
    }
    const double spacing =
        static_cast<double>(in_.gpus * in_.minutes * 60) / static_cast<double>(in_.capacity);
    const std::time_t last = out.task_starts.empty() ? start : out.task_starts.back();
    for (std::int64_t t = 1; static_cast<std::int64_t>(out.task_starts.size()) < in_.tasks; ++t) {
      out.task_starts.push_back(last + static_cast<std::time_t>(spacing * static_cast<double>(t)));
    }
  }

  // Its GPUs are free now: whatever else holds it back, Slurm knows; unless
  // all that is ahead of it are jobs sent seconds ago, which the scheduler
  // has not started yet: Slurm's answer then keeps a whole node for each of
  // them (its plan is per node), and a burst of one-GPU jobs made a cluster
  // with 17 free GPUs say "in 5 min". The layout's stands. Likewise while an
  // array's tasks wait for its own "%N" in the partition: Slurm 22.05's
  // --test-only then answers a minute late (now + 60 s, seen on the
  // testbed; a job submitted at that moment started at once), and a spread
  // array's pending tasks never moved to the cluster that freed up.
  bool SlurmAnswersLate(std::time_t floor, const AdjustedEstimate& out) const {
    const bool just_sent = out.pending_ahead > 0 && all_ahead_just_sent_;
    const bool task_limit_minute = task_limited_ && floor - in_.now <= kTaskLimitDelay;
    return (just_sent || task_limit_minute) && floor > in_.now;
  }

  const EstimateInput& in_;
  const catalog::AcceleratorCatalog& catalog_;
  const bool pooled_;
  GpuLayout layout_;
  bool task_limited_ = false;  // an array's tasks wait for its own "%N" here
  bool all_ahead_just_sent_ = true;
  double backlog_gpu_s_ = 0;  // beyond kMostLaidOut
  std::optional<std::time_t> own_start_;
  std::time_t own_planned_ = 0;  // Slurm's plan for it
};

}  // namespace

AdjustedEstimate AccountForPendingWork(const EstimateInput& in,
                                       const std::vector<cluster::QueuedJob>& queue,
                                       const catalog::AcceleratorCatalog& catalog) {
  AdjustedEstimate out;
  const std::time_t floor = std::max(in.now, in.test_only_start);
  out.start = floor;
  if (in.gpus <= 0 || in.capacity <= 0) return out;
  PendingWork work(in, catalog);
  work.HoldRunning(queue);
  work.LayOut(work.Waiting(queue), out);
  if (out.own_found) {
    work.SettleOwn(floor, out);
  } else {
    work.SettleNew(floor, out);
  }
  return out;
}

}  // namespace skyslurm::place
