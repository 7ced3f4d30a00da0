// SimCluster (sim_cluster.h): conservative backfill over per-node step
// functions of the free GPUs in time, lowered by the running jobs (until
// their limits) and by the reservations of the pending jobs before.
#include "bench/trace/sim_cluster.h"

#include <algorithm>
#include <utility>

namespace skyslurm::trace {
namespace {

double EndOf(double start, const SimJob& job) {
  return start + std::min(job.runtime_s, job.limit_s);
}

}  // namespace

SimCluster::SimCluster(std::string name, int nodes, int gpus_per_node, std::size_t plan_depth,
                       double plan_window_s)
    : name_(std::move(name)),
      nodes_(nodes),
      gpus_per_node_(gpus_per_node),
      free_(static_cast<std::size_t>(nodes), gpus_per_node),
      plan_depth_(plan_depth),
      plan_window_s_(plan_window_s),
      plan_(RunningProfile(0)) {}

int SimCluster::busy_gpus() const {
  int busy = 0;
  for (const int f : free_) busy += gpus_per_node_ - f;
  return busy;
}

bool SimCluster::Fits(const SimJob& job) const {
  return job.nodes >= 1 && job.nodes <= nodes_ && job.gpus_per_node <= gpus_per_node_;
}

namespace {

// The index of the step that begins at `x` in a node's steps, made when
// none does (a copy of the one it falls in); a time before the first step
// is the first step's.
template <typename Steps>
std::size_t SplitAt(Steps& steps, double x) {
  if (x <= steps.front().t) return 0;
  auto it = std::lower_bound(steps.begin(), steps.end(), x,
                             [](const auto& step, double at) { return step.t < at; });
  if (it != steps.end() && it->t == x) return static_cast<std::size_t>(it - steps.begin());
  const int free = std::prev(it)->free;
  it = steps.insert(it, {x, free});
  return static_cast<std::size_t>(it - steps.begin());
}

// The fewest GPUs free on the node over [from, until).
template <typename Steps>
int LeastFree(const Steps& steps, double from, double until) {
  auto it = std::upper_bound(steps.begin(), steps.end(), from,
                             [](double at, const auto& step) { return at < step.t; });
  if (it != steps.begin()) --it;
  int least = it->free;
  for (++it; it != steps.end() && it->t < until; ++it) least = std::min(least, it->free);
  return least;
}

}  // namespace

void SimCluster::Hold(Profile& profile, double start, const std::vector<int>& on,
                      const SimJob& job) {
  const double end = start + job.limit_s;
  for (const int n : on) {
    auto& steps = profile[static_cast<std::size_t>(n)];
    if (end <= steps.front().t) continue;
    const std::size_t from = SplitAt(steps, start);
    const std::size_t to = end == kNever ? steps.size() : SplitAt(steps, end);
    for (std::size_t i = from; i < to; ++i) steps[i].free -= job.gpus_per_node;
  }
}

SimCluster::Profile SimCluster::RunningProfile(double now) const {
  Profile profile(static_cast<std::size_t>(nodes_), std::vector<Step>{{now, gpus_per_node_}});
  for (const Running& r : running_) Hold(profile, r.start, r.on, r.job);
  return profile;
}

std::optional<std::pair<double, std::vector<int>>> SimCluster::Earliest(const Profile& profile,
                                                                        const SimJob& job,
                                                                        double now) const {
  if (!Fits(job)) return std::nullopt;
  const double length = job.limit_s;
  // Per node, the starts it allows: a start t is out when [t, t + limit)
  // meets a stretch with too few GPUs free, [a, e): t in (a - limit, e).
  // What is left are closed intervals [lo, hi].
  struct Span {
    double lo, hi;
    int node;
  };
  std::vector<Span> spans;
  for (std::size_t n = 0; n < profile.size(); ++n) {
    const auto& steps = profile[n];
    double from = now;
    for (std::size_t i = 0; i < steps.size() && from < kNever; ++i) {
      if (steps[i].free >= job.gpus_per_node) continue;
      const double a = steps[i].t;
      const double e = i + 1 < steps.size() ? steps[i + 1].t : kNever;
      if (e <= from) continue;
      if (a - length >= from) spans.push_back({from, a - length, static_cast<int>(n)});
      from = std::max(from, e);
    }
    if (from < kNever) spans.push_back({from, kNever, static_cast<int>(n)});
  }
  // The earliest instant `job.nodes` nodes allow: a sweep, openings
  // before closings at one instant (the intervals are closed).
  std::vector<std::pair<double, int>> sweep;
  sweep.reserve(spans.size() * 2);
  for (const Span& s : spans) {
    sweep.emplace_back(s.lo, -1);
    if (s.hi < kNever) sweep.emplace_back(s.hi, +1);
  }
  std::sort(sweep.begin(), sweep.end());
  int open = 0;
  double at = kNever;
  for (const auto& [t, closing] : sweep) {
    open -= closing;
    if (open >= job.nodes) {
      at = t;
      break;
    }
  }
  if (at == kNever) return std::nullopt;
  // Best fit: of the nodes that allow it then, the fullest over its time.
  std::vector<std::pair<int, int>> room;  // (GPUs free at the least, node)
  for (const Span& s : spans) {
    if (s.lo <= at && at <= s.hi) {
      room.emplace_back(LeastFree(profile[static_cast<std::size_t>(s.node)], at, at + length),
                        s.node);
    }
  }
  std::sort(room.begin(), room.end());
  std::vector<int> on;
  for (int k = 0; k < job.nodes; ++k) on.push_back(room[static_cast<std::size_t>(k)].second);
  return std::make_pair(at, on);
}

void SimCluster::Schedule(double now, std::vector<Event>* events) {
  Profile profile = RunningProfile(now);
  planned_.clear();
  std::vector<SimJob> still;
  std::size_t tested = 0;
  for (SimJob& job : pending_) {
    const auto at = tested++ < plan_depth_ ? Earliest(profile, job, now) : std::nullopt;
    // Beyond the depth, or its start beyond the window: not planned (a job
    // that never fits is refused at submission).
    if (!at || at->first - now > plan_window_s_) {
      planned_.push_back(kNever);
      still.push_back(std::move(job));
      continue;
    }
    Hold(profile, at->first, at->second, job);
    if (at->first <= now) {
      for (const int n : at->second) free_[static_cast<std::size_t>(n)] -= job.gpus_per_node;
      if (events != nullptr) events->push_back({now, job.id, Event::Kind::kStart});
      running_.push_back({std::move(job), now, at->second});
    } else {
      planned_.push_back(at->first);
      still.push_back(std::move(job));
    }
  }
  pending_ = std::move(still);
  plan_ = std::move(profile);
  plan_at_ = now;
}

void SimCluster::AdvanceTo(double t, std::vector<Event>* events) {
  while (true) {
    const double next = NextEnd();
    if (next > t) break;
    // Every job that ends then, then one pass.
    for (std::size_t i = 0; i < running_.size();) {
      if (EndOf(running_[i].start, running_[i].job) <= next) {
        for (const int n : running_[i].on) {
          free_[static_cast<std::size_t>(n)] += running_[i].job.gpus_per_node;
        }
        if (events != nullptr) events->push_back({next, running_[i].job.id, Event::Kind::kEnd});
        running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    Schedule(next, events);
  }
}

double SimCluster::NextEnd() const {
  double next = kNever;
  for (const Running& r : running_) next = std::min(next, EndOf(r.start, r.job));
  return next;
}

bool SimCluster::Submit(const SimJob& job, double now, std::vector<Event>* events) {
  if (!Fits(job)) return false;
  AdvanceTo(now, events);
  // The last in priority: the plan of the jobs before it stands (nothing
  // changed since the last pass but the time), and it is planned behind
  // them, as a pass would.
  std::optional<std::pair<double, std::vector<int>>> at;
  if (pending_.size() < plan_depth_) at = Earliest(plan_, job, now);
  if (at && at->first - now <= plan_window_s_) {
    Hold(plan_, at->first, at->second, job);
    if (at->first <= now) {
      for (const int n : at->second) free_[static_cast<std::size_t>(n)] -= job.gpus_per_node;
      if (events != nullptr) events->push_back({now, job.id, Event::Kind::kStart});
      running_.push_back({job, now, at->second});
      return true;
    }
  }
  pending_.push_back(job);
  planned_.push_back(at && at->first - now <= plan_window_s_ ? at->first : kNever);
  return true;
}

bool SimCluster::CancelPending(const std::string& id, double now, std::vector<Event>* events) {
  AdvanceTo(now, events);
  const auto it =
      std::find_if(pending_.begin(), pending_.end(), [&](const SimJob& j) { return j.id == id; });
  if (it == pending_.end()) return false;
  pending_.erase(it);
  Schedule(now, events);
  return true;
}

std::optional<double> SimCluster::EstimateStart(const SimJob& job, double now) const {
  // Between two passes nothing here changes but the time.
  const auto at = Earliest(plan_, job, std::max(now, plan_at_));
  if (!at) return std::nullopt;
  return at->first;
}

std::optional<double> SimCluster::PlannedStart(const std::string& id) const {
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    if (pending_[i].id == id) return planned_[i];
  }
  return std::nullopt;
}

bool SimCluster::IsPending(const std::string& id) const {
  return std::any_of(pending_.begin(), pending_.end(), [&](const SimJob& j) { return j.id == id; });
}

}  // namespace skyslurm::trace
