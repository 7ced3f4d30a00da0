// SimCluster (sim_cluster.h): conservative backfill over a per-node profile
// of the GPUs held in time, by running jobs (until their limits) and by the
// reservations of the pending jobs before.
#include "bench/trace/sim_cluster.h"

#include <algorithm>
#include <utility>

namespace skyslurm::trace {
namespace {

// The most GPUs held at once, from the (time, +/- GPUs) points of the
// holdings within a window, sorted.
int Peak(const std::vector<std::pair<double, int>>& points) {
  int held = 0, peak = 0;
  for (const auto& [at, delta] : points) {
    held += delta;
    peak = std::max(peak, held);
  }
  return peak;
}

double EndOf(double start, const SimJob& job) {
  return start + std::min(job.runtime_s, job.limit_s);
}

}  // namespace

SimCluster::SimCluster(std::string name, int nodes, int gpus_per_node)
    : name_(std::move(name)),
      nodes_(nodes),
      gpus_per_node_(gpus_per_node),
      free_(static_cast<std::size_t>(nodes), gpus_per_node) {}

int SimCluster::busy_gpus() const {
  int busy = 0;
  for (const int f : free_) busy += gpus_per_node_ - f;
  return busy;
}

bool SimCluster::Fits(const SimJob& job) const {
  return job.nodes >= 1 && job.nodes <= nodes_ && job.gpus_per_node <= gpus_per_node_;
}

void SimCluster::Hold(Profile& profile, double start, const std::vector<int>& on,
                      const SimJob& job) {
  for (const int n : on) {
    profile[static_cast<std::size_t>(n)].push_back({start, start + job.limit_s, job.gpus_per_node});
  }
}

SimCluster::Profile SimCluster::RunningProfile() const {
  Profile profile(static_cast<std::size_t>(nodes_));
  for (const Running& r : running_) Hold(profile, r.start, r.on, r.job);
  return profile;
}

std::optional<std::pair<double, std::vector<int>>> SimCluster::Earliest(const Profile& profile,
                                                                        const SimJob& job,
                                                                        double now) const {
  if (!Fits(job)) return std::nullopt;
  // Room only grows where a holding ends: the earliest start is now or one
  // of those ends.
  std::vector<double> candidates = {now};
  for (const auto& node : profile) {
    for (const Usage& u : node) {
      if (u.to > now) candidates.push_back(u.to);
    }
  }
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  for (const double t : candidates) {
    const double until = t + job.limit_s;
    std::vector<std::pair<int, int>> room;  // (free GPUs at the peak, node)
    for (std::size_t n = 0; n < profile.size(); ++n) {
      std::vector<std::pair<double, int>> points;
      for (const Usage& u : profile[n]) {
        if (u.from < until && u.to > t) {
          points.emplace_back(std::max(u.from, t), u.gpus);
          points.emplace_back(u.to, -u.gpus);
        }
      }
      // Ends before starts at the same instant: a holding that ends when
      // another begins never overlaps it.
      std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first < b.first : a.second < b.second;
      });
      const int free_at_peak = gpus_per_node_ - Peak(points);
      if (free_at_peak >= job.gpus_per_node) room.emplace_back(free_at_peak, static_cast<int>(n));
    }
    if (static_cast<int>(room.size()) < job.nodes) continue;
    std::sort(room.begin(), room.end());  // best fit: the fullest nodes that fit
    std::vector<int> on;
    for (int k = 0; k < job.nodes; ++k) on.push_back(room[static_cast<std::size_t>(k)].second);
    return std::make_pair(t, on);
  }
  return std::nullopt;
}

void SimCluster::Schedule(double now, std::vector<Event>* events) {
  Profile profile = RunningProfile();
  planned_.clear();
  std::vector<SimJob> still;
  for (SimJob& job : pending_) {
    const auto at = Earliest(profile, job, now);
    if (!at) {  // cannot happen: refused at submission
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
  pending_.push_back(job);
  Schedule(now, events);
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
  if (!Fits(job)) return std::nullopt;
  Profile profile = RunningProfile();
  for (const SimJob& p : pending_) {
    const auto at = Earliest(profile, p, now);
    if (at) Hold(profile, at->first, at->second, p);
  }
  const auto at = Earliest(profile, job, now);
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
