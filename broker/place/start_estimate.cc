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

AdjustedEstimate AccountForPendingWork(const EstimateInput& in,
                                       const std::vector<cluster::QueuedJob>& queue,
                                       const catalog::AcceleratorCatalog& catalog) {
  AdjustedEstimate out;
  const std::time_t floor = std::max(in.now, in.test_only_start);
  out.start = floor;
  if (in.gpus <= 0 || in.capacity <= 0) return out;

  auto relevant = [&](const cluster::QueuedJob& j) {
    if (j.TotalGpus() <= 0) return false;
    // A job in several partitions ("a,b") counts when any of them shares nodes.
    bool shares = false;
    std::size_t start = 0;
    while (start <= j.partition.size()) {
      auto end = j.partition.find(',', start);
      if (end == std::string::npos) end = j.partition.size();
      if (in.partitions.contains(j.partition.substr(start, end - start))) shares = true;
      start = end + 1;
    }
    if (!shares) return false;
    return in.gpu_type.empty() || j.gpu_type.empty() || j.gpu_type == in.gpu_type ||
           catalog.Same(j.gpu_type, in.gpu_type);
  };
  // Nodes unknown: the partition's GPUs as one pool, each job's from it.
  const bool pooled = in.nodes.empty();
  GpuLayout layout(pooled ? std::vector<NodeGpus>{{"", in.capacity}} : in.nodes, in.now);
  auto shape = [&](std::int64_t nodes, std::int64_t per_node, std::int64_t total) {
    nodes = std::max<std::int64_t>(nodes, 1);
    if (pooled) return std::pair<std::int64_t, std::int64_t>{1, total};
    return std::pair<std::int64_t, std::int64_t>{
        nodes, per_node > 0 ? per_node : (total + nodes - 1) / nodes};
  };
  for (const auto& j : queue) {
    // Holding GPUs (the probe's squeue lists pending and running jobs only).
    if (!relevant(j) || !cluster::HasNodes(j.phase)) continue;
    std::time_t end = j.end_time > 0 ? j.end_time : j.start_time + j.time_limit_minutes * 60;
    if (end <= in.now) continue;
    if (in.limit_use != nullptr && j.start_time > 0 && end > j.start_time) {
      // Ends at its user's share of its limit; one running past that ends
      // within the same share of what its limit leaves.
      const double share = in.limit_use->ShareOf(j.user, j.time_limit_minutes);
      std::time_t expected =
          j.start_time + static_cast<std::time_t>(share * static_cast<double>(end - j.start_time));
      if (expected <= in.now) {
        expected = in.now + static_cast<std::time_t>(share * static_cast<double>(end - in.now));
      }
      end = std::clamp(expected, in.now + 1, end);
    }
    const auto [nodes, per_node] = shape(j.nodes, j.gpus_per_node, j.TotalGpus());
    bool held = false;
    if (pooled) {
      layout.Hold(0, in.now, end, per_node);
      held = true;
    } else if (auto names = cluster::ExpandHostlist(j.nodelist); names.ok() && !names->empty()) {
      // Its nodes outside the job's partition (one sharing some) do not count.
      for (const std::string& name : *names) {
        if (auto line = layout.LineOf(name)) layout.Hold(*line, in.now, end, per_node);
      }
      held = true;
    }
    // Where it runs unknown: wherever it fits now.
    if (!held) (void)layout.Fit(nodes, per_node, end - in.now, true);
  }
  // Waiting to start, in the order Slurm's plan gives them (its priority
  // order; without a planned start, after the planned ones, as submitted).
  std::vector<const cluster::QueuedJob*> pending;
  bool task_limited = false;  // an array's tasks wait for its own "%N" here
  for (const auto& j : queue) {
    if (!relevant(j) || j.phase != cluster::JobPhase::kPending) continue;
    // Held by its user or an admin (priority 0): it starts when released,
    // never ahead of a job that can start. Tasks held back by their own
    // array's "%N" (JobArrayTaskLimit: as many of its tasks run as it
    // allows) start only as those end, on what they free: Slurm does not
    // weigh them for free GPUs, so they are not ahead either.
    if (j.reason == "JobArrayTaskLimit") task_limited = true;
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
  std::int64_t laid = 0;
  bool all_ahead_just_sent = true;
  double backlog_gpu_s = 0;  // beyond kMostLaidOut
  std::optional<std::time_t> own_start;
  std::time_t own_planned = 0;  // Slurm's plan for it
  for (const cluster::QueuedJob* j : pending) {
    const std::int64_t minutes = j->time_limit_minutes > 0 ? j->time_limit_minutes : in.minutes;
    const std::int64_t seconds =
        in.limit_use == nullptr
            ? minutes * 60
            : std::max<std::int64_t>(
                  1, std::llround(in.limit_use->ShareOf(j->user, j->time_limit_minutes) *
                                  static_cast<double>(minutes * 60)));
    const auto [nodes, per_node] = shape(j->nodes, j->gpus_per_node, j->TotalGpus());
    if (out.own_found) {
      // Behind the job: what its run holds back, not what holds it back.
      out.pending_behind += static_cast<int>(j->tasks);
      out.gpus_behind += j->TotalGpus() * j->tasks;
      continue;
    }
    if (!in.own_job_id.empty() && j->job_id == in.own_job_id) {
      out.own_found = true;
      out.own_run_s = seconds;
      own_planned = j->start_time;
      // Its own place in the queue: where it fits behind the jobs before it
      // (for its whole limit, as Slurm fits it).
      if (auto fit = layout.Fit(nodes, per_node, minutes * 60, false)) {
        own_start =
            *fit + static_cast<std::time_t>(backlog_gpu_s / static_cast<double>(in.capacity));
      }
      continue;
    }
    if (j->submit_time <= 0 || in.now - j->submit_time > kJustSent) all_ahead_just_sent = false;
    // A pending array's tasks each wait for their GPUs.
    for (std::int64_t t = 0; t < j->tasks; ++t) {
      if (laid++ < kMostLaidOut) {
        (void)layout.Fit(nodes, per_node, seconds, true);
      } else {
        backlog_gpu_s += static_cast<double>(j->TotalGpus() * seconds);
      }
    }
    out.pending_ahead += static_cast<int>(j->tasks);
    out.pending_gpus += j->TotalGpus() * j->tasks;
  }
  if (out.own_found) {
    if (!own_start) return out;
    // Pending with its GPUs free by the layout: the scheduler has not
    // passed yet, or something else holds it (CPUs, memory, a reservation,
    // a limit). Slurm knows which: its plan for the job (now, or when that
    // other thing lets go), else its answer for a new one. A start past the
    // largest backfill window (bf_window at most 30 days) is no plan of the
    // backfill's, and is not taken as one.
    const bool planned = own_planned > 0 && own_planned - in.now <= kLongestSlurmPlan;
    out.start = *own_start > in.now ? *own_start : planned ? std::max(own_planned, in.now) : floor;
    out.moved = out.start > floor;
    out.earlier = out.start < floor;
    return out;
  }
  const auto [nodes, per_node] = shape(in.job_nodes, 0, in.gpus);
  std::optional<std::time_t> start = layout.Fit(nodes, per_node, in.minutes * 60, false);
  if (!start) return out;  // more than the partition will ever have free: Slurm's answer stands
  const auto behind_backlog =
      static_cast<std::time_t>(backlog_gpu_s / static_cast<double>(in.capacity));
  *start += behind_backlog;
  if (in.tasks > 1) {
    // An array's tasks, each where the ones before it left room; past the
    // laid-out ones, one more every share of the partition's GPU time.
    const std::int64_t laid_tasks = std::min(in.tasks, kMostLaidOutTasks);
    out.task_starts.reserve(static_cast<std::size_t>(in.tasks));
    for (std::int64_t t = 0; t < laid_tasks; ++t) {
      auto at = layout.Fit(nodes, per_node, in.minutes * 60, true);
      if (!at) break;
      out.task_starts.push_back(*at + behind_backlog);
    }
    const double spacing =
        static_cast<double>(in.gpus * in.minutes * 60) / static_cast<double>(in.capacity);
    const std::time_t last = out.task_starts.empty() ? *start : out.task_starts.back();
    for (std::int64_t t = 1; static_cast<std::int64_t>(out.task_starts.size()) < in.tasks; ++t) {
      out.task_starts.push_back(last + static_cast<std::time_t>(spacing * static_cast<double>(t)));
    }
  }
  // Its GPUs are free now: whatever else holds it back, Slurm knows;
  // unless all that is ahead of it are jobs sent seconds ago, which the
  // scheduler has not started yet: Slurm's answer then keeps a whole node
  // for each of them (its plan is per node), and a burst of one-GPU jobs
  // made a cluster with 17 free GPUs say "in 5 min". The layout's stands.
  // Likewise while an array's tasks wait for its own "%N" in the partition:
  // Slurm 22.05's --test-only then answers a minute late (now + 60 s, seen
  // on the testbed; a job submitted at that moment started at once), and a
  // spread array's pending tasks never moved to the cluster that freed up.
  if (*start <= in.now) {
    const bool just_sent = out.pending_ahead > 0 && all_ahead_just_sent;
    const bool task_limit_minute = task_limited && floor - in.now <= kTaskLimitDelay;
    if ((just_sent || task_limit_minute) && floor > in.now) {
      out.start = in.now;
      out.earlier = true;
    }
    return out;
  }
  out.start = *start;
  out.moved = *start > floor;
  out.earlier = *start < floor;
  return out;
}

}  // namespace skyslurm::place
