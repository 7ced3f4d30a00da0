// What the pieces of a job's life share (lifecycle.h): the store, the
// clusters, the options, each cluster's last answer (cluster_views.h), each
// job's input read once (parsed_jobs.h), a lock per job, and how a decision
// is recorded: the job's new state and an event with its reason, together.
#pragma once

#include <atomic>
#include <chrono>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/backend/backend.h"
#include "broker/config/settings.h"
#include "broker/daemon/jobs/cluster_views.h"
#include "broker/daemon/jobs/event_kind.h"
#include "broker/daemon/jobs/parsed_jobs.h"
#include "broker/place/placement.h"
#include "broker/place/workspace.h"
#include "broker/store/job_store.h"
#include "broker/util/command.h"

namespace skyslurm::daemon {

// The action of a submit intent whose answer was lost (sent, the wait for
// it timed out): settled as "submit", but not taken for never sent before
// ManagerOptions::unanswered_grace.
inline constexpr std::string_view kUnansweredSubmit = "submit-unanswered";

struct ManagerOptions {
  // A file made when a job is first given a global id (job/global_id.h):
  // the shims' squeue and sacct list routed jobs only once it exists
  // (daemon_paths.h: routed_marker); "" = none made.
  std::string routed_marker;
  // One cluster's queue read: a healthy one answers in well under a second,
  // and a dead one holds every look at the queues up to this long.
  std::chrono::milliseconds queue_timeout{3'000};
  std::chrono::milliseconds probe_timeout{5'000};
  std::chrono::milliseconds estimate_timeout{10'000};
  std::chrono::milliseconds submit_timeout{30'000};
  // A submission whose answer was lost (submit_timeout passed) may still
  // land: its command can outlive the wait for it. Only after this long
  // without the job in the cluster's queue is it taken for one that never
  // reached the cluster and submitted again.
  std::chrono::seconds unanswered_grace{120};
  // Copying a job's folder to a cluster (rsync): at most this long, and at
  // most kCopiesPerCluster at once into one cluster (its sshd drops
  // connections beyond its MaxStartups).
  std::chrono::milliseconds copy_timeout{600'000};
  CommandRunner* copy_runner = nullptr;  // null: local processes
  std::function<std::time_t()> clock;           // default: time()
  std::function<void(const std::string&)> log;  // each recorded decision, one line
  // A site's replica: its name in the jobs' leases ("" = a user's own
  // daemon, which drives every job), and how long a lease lasts.
  std::string replica;
  std::chrono::milliseconds lease{10'000};
};

class JobContext {
 public:
  JobContext(store::JobStore& store, place::Workspace& workspace, ManagerOptions options);
  JobContext(const JobContext&) = delete;
  JobContext& operator=(const JobContext&) = delete;

  store::JobStore& store;
  place::Workspace& ws;
  const ManagerOptions options;
  const config::FailoverSettings policy;
  ClusterViews views;
  ParsedJobs parsed;

  std::time_t Now() const;
  // One line of the daemon's log (ManagerOptions::log), if it keeps one.
  void Log(const std::string& line) const;
  backend::Backend* BackendOf(const std::string& cluster);
  // The lock a job is changed under (by a request, or the look at the queues).
  std::mutex& LockFor(const std::string& sky_id);
  // The job as it is now and an event of `kind` saying why, in one
  // transaction; logged.
  Status Record(const store::SkyJob& job, EventKind kind, const std::string& detail,
                const std::string& cluster = "", const std::string& native_id = "");
  // The job leaves its current copy (recorded as `copy_state`) for `state`,
  // in one transaction with the event.
  Status DetachCopy(store::SkyJob& job, const std::string& copy_state, const std::string& state,
                    const std::string& reason, EventKind kind, const std::string& detail);
  // Gives a job that just got its first copy (cluster, native_id) its
  // global id, inside the store transaction that records the copy.
  Status GiveGlobalId(store::SkyJob& job);
  // The global id (job/global_id.h) of a cluster's job: 0 when the cluster
  // has no index or the id does not fit below 2^26.
  std::uint64_t GlobalIdOf(const std::string& cluster, const std::string& native_id) const;
  // The cluster and its own id that a global id names by arithmetic alone
  // (a job skyslurm may not track); nullopt for no cluster of this
  // configuration.
  std::optional<std::pair<std::string, std::string>> DecodeGlobalIdOf(
      std::uint64_t global_id) const;
  // A global id as the ids below take it: the sky id it was given to (with
  // the same suffix), else the cluster:id it names; any other id as it is.
  std::string ResolveGlobalId(const std::string& id);
  // The clusters silent for cluster_dead_after or more.
  std::vector<std::string> DeadClusters() const;
  // The clusters as a plan for a job sees them: those in `dead` unavailable
  // (`why`) unless they already are.
  std::vector<place::ClusterHandle> HandlesWithout(const std::vector<std::string>& dead,
                                                   const std::string& why) const;
  // The placement policy for a job placed or moved now: the site's and the
  // user's, the budgets' spend, and (estimates: calibrated) how each
  // cluster's estimates lately came true for the jobs in the store.
  place::Policy PolicyNow(std::chrono::milliseconds timeout);
  // What the daemon is doing for a job right now, for a client's progress
  // line ("copying ~/proj to beta: 45%"); "" when nothing long.
  // A site's replica (ManagerOptions::replica): takes the leases lapsed (a
  // replica that stopped) and free, and from then on drives only the jobs
  // it holds. Each look at the queues begins with it; the replica renews
  // what it holds apart, a few times a lease.
  void RefreshLeases();
  // Whether this daemon drives `sky_id` now (a user's own: every job).
  bool Drives(const std::string& sky_id);
  // Takes the lease of `sky_id` when it is free, lapsed or already this
  // replica's (then it drives it); false when another replica holds it.
  bool TakeJob(const std::string& sky_id);
  // Jobs taken over from a replica whose lease lapsed, since the start.
  std::int64_t takeovers() const { return takeovers_.load(); }

  void SetActivity(const std::string& sky_id, const std::string& what);
  std::string Activity(const std::string& sky_id);

 private:
  // Each cluster's index in global ids (registry.h: JobIdIndices).
  const std::map<std::string, int> job_id_indices_;
  std::atomic<bool> routed_marked_{false};
  std::mutex driven_mu_;
  std::set<std::string> driven_;  // RefreshLeases: the jobs this replica holds
  std::atomic<std::int64_t> takeovers_{0};
  std::mutex locks_mu_;
  std::map<std::string, std::unique_ptr<std::mutex>> locks_;
  std::mutex activity_mu_;
  std::map<std::string, std::string> activity_;
};

}  // namespace skyslurm::daemon
