#include "broker/daemon/jobs/cluster_views.h"

#include "broker/backend/array_tasks.h"

namespace skyslurm::daemon {

void ClusterViews::Read(place::Workspace& ws, std::chrono::milliseconds read_timeout,
                        std::chrono::milliseconds probe_timeout,
                        std::chrono::milliseconds collect_for, std::time_t now) {
  for (std::size_t i = 0; i < ws.handles.size(); ++i) {
    auto& h = ws.handles[i];
    if (h.backend == nullptr) continue;
    backend::Backend* b = h.backend;
    auto& read = reading_[h.name];
    if (!read.valid()) {
      reading_since_[h.name] = now;
      read = std::async(std::launch::async, [b, read_timeout] { return b->Queue(read_timeout); });
    }
    // Never waited for here: a silent cluster must not slow the look at
    // the others' queues. One refresh per cluster at a time.
    auto& refreshing = refreshing_[h.name];
    const bool idle = !refreshing.valid() ||
                      refreshing.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    if (i < ws.caching.size() && ws.caching[i] != nullptr && h.excluded.empty() && idle) {
      // (refreshing_ is destroyed before views_: a refresh in flight ends first.)
      refreshing =
          std::async(std::launch::async, [this, c = ws.caching[i], probe_timeout, name = h.name] {
            const auto start = std::chrono::steady_clock::now();
            c->Refresh(probe_timeout);
            const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
            std::lock_guard lock(mu_);
            views_[name].probe_seconds = took.count();
          });
    }
  }
  const auto collect_by = std::chrono::steady_clock::now() + collect_for;
  for (auto& [name, f] : reading_) {
    if (f.wait_until(collect_by) != std::future_status::ready) continue;  // still busy
  }
  for (auto& [name, f] : reading_) {
    if (!f.valid() || f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) continue;
    auto result = f.get();  // leaves `f` empty: the next look starts a new read
    std::lock_guard lock(mu_);
    ClusterView& v = views_[name];
    v.answered_now = result.ok();
    if (result.ok()) {
      v.failing_since = 0;
      if (v.up_since == 0) v.up_since = now;
      v.answered = now;
      // What the queue showed is as of the read's start: a job submitted
      // since may be missing from it (the policy's queue_read guard).
      v.read_at = reading_since_[name];
      v.error.clear();
      // An array's tasks are one job, as the store knows it (array_tasks.h).
      v.jobs = backend::FoldArrayTasks(std::move(*result));
    } else {
      v.error = result.status().message();
      v.up_since = 0;
      if (v.failing_since == 0) v.failing_since = reading_since_[name];
    }
  }
}

std::vector<std::string> ClusterViews::Dead(std::time_t now, int dead_after) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> dead;
  for (const auto& [name, v] : views_) {
    const std::time_t since = v.silent_since();
    if (since != 0 && now - since >= dead_after) dead.push_back(name);
  }
  return dead;
}

void ClusterViews::Contacted(const std::string& cluster, std::time_t now) {
  std::lock_guard lock(mu_);
  views_[cluster].contacted = now;
}

ClusterViews::Seen ClusterViews::Look(const store::SkyJob& job, std::time_t now) const {
  Seen seen;
  Observation& o = seen.observation;
  o.now = now;
  std::lock_guard lock(mu_);
  const auto it = views_.find(job.cluster);
  static const ClusterView kNeverSeen;
  const ClusterView& v = it != views_.end() ? it->second : kNeverSeen;  // not a copy of its queue
  o.cluster_answered = v.answered_now ? v.heard() : v.silent_since();
  o.answered_now = v.answered_now;
  o.queue_read = v.read_at;
  for (const auto& [name, view] : views_) {
    if (!view.answered_now) continue;
    for (const auto& j : view.jobs) {
      if (j.sky_id != job.sky_id) continue;
      if (j.key.cluster == job.cluster && j.key.job_id == job.native_id) o.copy = j;
      if (backend::IsLive(j.phase)) seen.live_copies.push_back(j);
    }
  }
  return seen;
}

std::optional<std::optional<backend::JobInfo>> ClusterViews::Listed(
    const std::string& cluster, const std::string& native_id) const {
  std::lock_guard lock(mu_);
  auto it = views_.find(cluster);
  if (it == views_.end() || !it->second.answered_now) return std::nullopt;
  for (const auto& j : it->second.jobs) {
    if (j.key.job_id == native_id) return std::optional<backend::JobInfo>(j);
  }
  return std::optional<backend::JobInfo>();
}

void ClusterViews::Visit(
    const std::function<void(const std::map<std::string, ClusterView>&)>& f) const {
  std::lock_guard lock(mu_);
  f(views_);
}

}  // namespace skyslurm::daemon
