#include "broker/daemon/jobs/job_context.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>

#include "broker/job/global_id.h"
#include "broker/place/estimate_calibration.h"
#include "broker/place/spending.h"

namespace skyslurm::daemon {

JobContext::JobContext(store::JobStore& store_in, place::Workspace& workspace,
                       ManagerOptions options_in)
    : store(store_in),
      ws(workspace),
      options(std::move(options_in)),
      policy(workspace.config.settings.failover),
      job_id_indices_(workspace.registry.JobIdIndices(workspace.config.settings)) {}

void JobContext::RefreshLeases() {
  if (options.replica.empty()) return;
  // (Its leases are renewed by a thread of their own, skyslurmd_main.cc,
  // never only as often as the looks come.)
  auto taken = store.TakeFreeLeases(options.replica, options.lease, 10'000);
  if (taken.ok() && !taken->empty()) {
    takeovers_ += static_cast<std::int64_t>(taken->size());
    Log(fmt::format("took over {} job(s) whose lease lapsed: {}", taken->size(),
                    fmt::join(*taken, ", ")));
  }
  auto held = store.LeasedBy(options.replica);
  if (!held.ok()) {
    // The database does not answer: drive nothing until it does (another
    // replica may take these jobs over meanwhile).
    Log("cannot read this replica's leases: " + held.status().message());
    held = std::vector<std::string>{};
  }
  std::lock_guard lock(driven_mu_);
  driven_ = std::set<std::string>(held->begin(), held->end());
}

bool JobContext::Drives(const std::string& sky_id) {
  if (options.replica.empty()) return true;
  std::lock_guard lock(driven_mu_);
  return driven_.contains(sky_id);
}

bool JobContext::TakeJob(const std::string& sky_id) {
  if (options.replica.empty()) return true;
  auto taken = store.TakeLease(sky_id, options.replica, options.lease);
  if (!taken.ok() || !*taken) return false;
  std::lock_guard lock(driven_mu_);
  driven_.insert(sky_id);
  return true;
}

std::time_t JobContext::Now() const {
  return options.clock ? options.clock() : std::time(nullptr);
}

void JobContext::Log(const std::string& line) const {
  if (options.log) options.log(line);
}

backend::Backend* JobContext::BackendOf(const std::string& cluster) {
  place::ClusterHandle* h = ws.Find(cluster);
  return h != nullptr ? h->backend : nullptr;
}

std::mutex& JobContext::LockFor(const std::string& sky_id) {
  std::lock_guard lock(locks_mu_);
  auto& m = locks_[sky_id];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

Status JobContext::Record(const store::SkyJob& job, EventKind kind, const std::string& detail,
                          const std::string& cluster, const std::string& native_id) {
  Status st = store.Apply([&] {
    store::SkyJob j = job;
    j.updated = Now();
    SKY_RETURN_IF_ERROR(store.Update(j));
    return store.AddEvent(
        {0, job.sky_id, Now(), std::string(EventName(kind)), cluster, native_id, detail});
  });
  Log(fmt::format("{} {}{} {}", job.sky_id, EventName(kind),
                  cluster.empty() ? "" : " " + cluster + (native_id.empty() ? "" : ":" + native_id),
                  detail));
  return st;
}

Status JobContext::DetachCopy(store::SkyJob& job, const std::string& copy_state,
                              const std::string& state, const std::string& reason, EventKind kind,
                              const std::string& detail) {
  const std::string cluster = job.cluster, native_id = job.native_id;
  return store.Apply([&] {
    SKY_RETURN_IF_ERROR(store.SetCopyState(cluster, native_id, copy_state));
    job.cluster.clear();
    job.native_id.clear();
    job.state = state;
    job.reason = reason;
    return Record(job, kind, detail, cluster, native_id);
  });
}

std::uint64_t JobContext::GlobalIdOf(const std::string& cluster,
                                     const std::string& native_id) const {
  const auto it = job_id_indices_.find(cluster);
  if (it == job_id_indices_.end()) return 0;
  return EncodeGlobalId(it->second, native_id).value_or(0);
}

std::optional<std::pair<std::string, std::string>> JobContext::DecodeGlobalIdOf(
    std::uint64_t global_id) const {
  const DecodedId d = DecodeGlobalId(global_id);
  if (d.index == 0) return std::nullopt;
  for (const auto& [cluster, index] : job_id_indices_) {
    if (index == d.index) return std::make_pair(cluster, std::to_string(d.local));
  }
  return std::nullopt;
}

Status JobContext::GiveGlobalId(store::SkyJob& job) {
  if (job.global_id != 0) return OkStatus();  // given once, kept through moves
  std::uint64_t id = GlobalIdOf(job.cluster, job.native_id);
  if (!job.parent.empty() && id != 0) {
    // A spread array's parts share the whole's id, which its first part
    // sent gives it.
    SKY_ASSIGN_OR_RETURN(store::SkyJob whole, store.Get(job.parent));
    if (whole.global_id == 0) {
      whole.global_id = id;
      SKY_RETURN_IF_ERROR(store.Update(whole));
    }
    id = whole.global_id;
  }
  job.global_id = id;
  if (id != 0 && !options.routed_marker.empty() && !routed_marked_.exchange(true)) {
    // The shims' squeue and sacct merge routed jobs in from now on.
    const int fd = ::open(options.routed_marker.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) ::close(fd);
  }
  return OkStatus();
}

std::string JobContext::ResolveGlobalId(const std::string& id) {
  if (!IsGlobalIdWord(id)) return id;
  const JobIdWord word = *SplitJobIdWord(id);
  if (auto job = store.GetByGlobalId(word.number); job.ok()) return job->sky_id + word.rest;
  // Not one skyslurmd tracks (placed without it): the cluster's job it names.
  if (auto named = DecodeGlobalIdOf(word.number)) {
    return named->first + ":" + named->second + word.rest;
  }
  return id;
}

std::vector<std::string> JobContext::DeadClusters() const {
  return views.Dead(Now(), policy.cluster_dead_after);
}

std::vector<place::ClusterHandle> JobContext::HandlesWithout(const std::vector<std::string>& dead,
                                                             const std::string& why) const {
  std::vector<place::ClusterHandle> handles = ws.handles;  // a plan may mark them
  for (auto& h : handles) {
    if (std::find(dead.begin(), dead.end(), h.name) != dead.end() && h.unavailable.empty()) {
      h.unavailable = why;
    }
  }
  return handles;
}

place::Policy JobContext::PolicyNow(std::chrono::milliseconds timeout) {
  place::Policy policy_now = place::PlacementPolicy(ws, timeout);
  if (!ws.config.settings.calibrate_estimates) return policy_now;
  const std::time_t now = Now();
  // Every cluster's latest jobs fit in this many rows.
  auto placed =
      store.PlacedSince(now - place::kCalibrationWindowS, place::kCalibrationLatest * 20);
  if (!placed.ok()) return policy_now;  // estimates as laid out: no worse than the default
  std::vector<place::PlacedStart> starts;
  for (const store::SkyJob& j : *placed) {
    // What the model said: calibration learns from the model, not from its
    // own scaled answers (which would undo it the next time).
    starts.push_back({j.cluster, j.submitted, j.model_start > 0 ? j.model_start : j.expected_start,
                      j.started, j.started == 0 && j.state == "PENDING"});
  }
  policy_now.estimate_scales = place::CalibrateEstimates(std::move(starts), now);
  return policy_now;
}

void JobContext::SetActivity(const std::string& sky_id, const std::string& what) {
  std::lock_guard lock(activity_mu_);
  if (what.empty()) {
    activity_.erase(sky_id);
  } else {
    activity_[sky_id] = what;
  }
}

std::string JobContext::Activity(const std::string& sky_id) {
  std::lock_guard lock(activity_mu_);
  auto it = activity_.find(sky_id);
  return it == activity_.end() ? "" : it->second;
}

}  // namespace skyslurm::daemon
