// The face of skyslurmd's job lifecycle: submits sky jobs (the intent written
// before every remote action), looks at every cluster's queue each poll, and
// moves, re-places and restarts jobs by the failover policy
// (failover_policy.h), recording every decision with its reason. After a
// crash, Recover() settles every open intent from the clusters' own queues
// (each Slurm job carries its sky id) before anything new is done, so a job
// is never lost and never runs twice. The work is done by its pieces
// (lifecycle.h); the API server, the dashboard and the Slurm commands' front
// reach it through this.
//
// A site's daemon serves many users: what a method finds, lists or acts on
// is what the current viewer may see (util/acting_user.h: their own jobs,
// or every job for an admin); another user's job is as unknown as one never
// made. Every command for a job runs as its owner. A site's replicas share
// the store: each drives the jobs whose lease it holds
// (ManagerOptions::replica).
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "broker/backend/backend.h"
#include "broker/config/settings.h"
#include "broker/daemon/jobs/failover_policy.h"
#include "broker/daemon/jobs/job_context.h"
#include "broker/daemon/jobs/job_input.h"
#include "broker/daemon/jobs/submit_types.h"
#include "broker/job/sky_id.h"
#include "broker/place/explain_view.h"
#include "broker/place/workspace.h"
#include "broker/store/job_store.h"

namespace skyslurm::daemon {

struct Lifecycle;

// One row of `skyslurm queue`.
struct QueueRow {
  std::string sky_id;  // "" for a job skyslurm did not route
  std::string cluster;
  std::string native_id;
  std::string user;
  std::string state;
  std::string reason;
  std::string name;
  std::time_t since = 0;  // submitted (pending) or started (running)
  // An array: its tasks in view by phase name ("PENDING" 6, "RUNNING" 2);
  // empty for a job that is not one.
  std::map<std::string, std::int64_t> tasks;
  std::time_t submitted = 0;  // when its cluster took it (0: not known)
};

// Whether `id` has the shape of a sky id (sky_id.h).
using skyslurm::LooksLikeSkyId;

class JobManager {
 public:
  JobManager(store::JobStore& store, place::Workspace& workspace, ManagerOptions options = {});
  ~JobManager();
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // Places and submits a new sky job; the same sky id again answers with the
  // job as it is (a client's retry never makes a second job).
  Result<SubmitAnswer> Submit(const SubmitRequest& request);

  // Every id below may also be a global id (job/global_id.h), with an
  // array's task suffix ("805306445_7").
  // Takes over a job from a user's own store (`skyslurm site adopt`): the
  // job as `owner`'s, its input (`job.input_json`: opened, as ToJson
  // writes it) sealed again with this daemon's key, with its copies,
  // history and open intents, all in one transaction; whoever drives it
  // next settles the intents as after a crash. False when it is here
  // already (adopting again adds nothing); AlreadyExists when the sky id is
  // another user's.
  Result<bool> Adopt(store::SkyJob job, const std::vector<store::Copy>& copies,
                     const std::vector<store::Event>& events,
                     const std::vector<store::Intent>& intents, const std::string& owner);
  // Cancels a sky job (every live copy), or a Slurm job named cluster:id.
  Status Cancel(const std::string& id);
  // A sky job with its history; `id` may also be cluster:id of one of its copies.
  Result<store::SkyJob> Find(const std::string& id);
  // The job's output as it is now, from whichever cluster it runs on.
  // The job's output from byte `offset` on, at most `max_bytes` of it, and
  // its whole size.
  Result<backend::Backend::OutputPart> Output(const std::string& id, std::uint64_t offset,
                                              std::size_t max_bytes);
  // Every job of the user's on every cluster, and the sky jobs between two
  // copies; from the last look at the queues. A spread array is one row (its
  // tasks counted over all its parts, each cluster's in the reason); with
  // `expand`, a row per part.
  std::vector<QueueRow> Queue(bool expand = false);

  // Settles open intents left by a crash (or by a cluster that stopped
  // answering); answers the sky jobs whose intents remain open.
  std::set<std::string> Recover();
  // One look at every cluster, then the policy's decisions acted on.
  void Tick();

  // Every sky job (or only those that have not ended), newest first; one's
  // history, copies and (a spread array's) parts.
  std::vector<store::SkyJob> List(bool live_only = false);
  std::size_t LiveJobs();
  std::vector<store::Event> History(const std::string& sky_id);
  std::vector<store::Copy> CopiesOf(const std::string& sky_id);
  std::vector<store::SkyJob> PartsOf(const std::string& sky_id);
  // The sky job a global id was given to.
  Result<store::SkyJob> FindByGlobalId(std::uint64_t global_id);

  // What a job has cost so far on elastic clusters: each copy's share of
  // the node time its cluster billed (place/spending.h), from the cluster's
  // ledger and accounting. `billed` is false when none of its copies went
  // to a billed cluster; `error` says why a bill could not be read.
  struct JobCost {
    bool billed = false;
    double amount = 0;
    std::string currency;
    std::vector<std::pair<store::Copy, double>> copies;  // on billed clusters
    std::string error;
  };
  JobCost CostOf(const store::SkyJob& job);

  // Each cluster as the last look at its queue found it, in configuration order.
  struct ClusterState {
    std::string name;
    std::time_t answered = 0;   // its queue's last read (0: none yet)
    std::time_t heard = 0;      // last heard from, by a read or an answer (0: never)
    std::string error;          // why the last look failed
    bool looked = false;        // its queue has been read (else the rest is empty)
    bool reachable = false;     // the last read answered
    std::time_t since = 0;      // answering (or silent) since then; 0: not known
    double probe_seconds = -1;  // its last probe's time; < 0: none yet
  };
  std::vector<ClusterState> ClusterStates();

  // What the daemon is doing for a job right now, for a client's progress
  // line ("copying ~/proj to beta: 45%"); "" when nothing long.
  std::string Activity(const std::string& sky_id);
  // Asks for a pending job's move to be weighed at the next look, by the
  // same rules as the daemon's own (placement, migrate_gain, max_moves,
  // moves_per_cluster), without waiting for migrate_after. FailedPrecondition
  // (409) with the reason for a job that cannot move (moves.h).
  Status RequestMove(const std::string& id);
  // `skyslurm explain` of a sky job's input as it was given, or of a script
  // and arguments (the dashboard's "where would this start?").
  Result<place::ExplainText> ExplainJob(const std::string& id);
  Result<place::ExplainText> Explain(const JobInput& input);

  // scontrol update succeeded on the clusters in `done` for this routed job
  // (its parts, for a spread array): the update carried into the input
  // every later copy is submitted from, or the copy bound to its cluster
  // (job/job_update.h); recorded as `updated`. Called with the job locked.
  void CarryUpdate(const std::string& sky_id, const std::vector<std::string>& update_words,
                   const std::set<std::string>& done);
  // The lock a job is changed under.
  std::mutex& LockFor(const std::string& sky_id);

  // The global id (job/global_id.h) of a cluster's job: 0 when the cluster
  // has no index or the id does not fit below 2^26.
  std::uint64_t GlobalIdOf(const std::string& cluster, const std::string& native_id) const;
  // The cluster and its own id that a global id names by arithmetic alone
  // (a job skyslurm may not track); nullopt for no cluster of this
  // configuration.
  std::optional<std::pair<std::string, std::string>> DecodeGlobalIdOf(
      std::uint64_t global_id) const;

  // The clusters, and the settings the fronts read.
  const place::Workspace& workspace() const;
  std::string home() const;
  backend::Backend* BackendOf(const std::string& cluster);
  // What a cluster's kind of backend offers (Slurm's for a cluster not known).
  backend::Capabilities CapabilitiesOf(const std::string& cluster) const;
  // The store, for the fronts that keep records of their own (the
  // dashboard's GPU samples).
  store::JobStore& store();
  std::time_t Now() const;
  void Log(const std::string& line) const;
  std::chrono::milliseconds submit_timeout() const;
  int poll_interval() const;
  // How a routed sbatch prints its job as the configuration files say
  // (skyslurm.yaml: submit_output), whatever the daemon's own environment.
  config::SubmitOutput submit_output() const;
  // Jobs taken over from a site's replica whose lease lapsed, since the start.
  std::int64_t takeovers() const;
  // Whether the site lets jobs be routed (skyslurm.yaml: routing).
  bool routing() const;
  // The currency of elastic clusters' prices (skyslurm.yaml: elastic).
  const std::string& currency() const;
  // The user's home folder (where a script given as text is explained from).
  const std::string& home_dir() const;

 private:
  Result<place::ExplainText> ExplainRequest(const job::Request& request,
                                            const std::string& submit_dir);
  // One job at the look: its queue's answer decided on and acted on.
  void LookAt(store::SkyJob job, const std::set<std::string>& unsettled, std::time_t now);
  void Act(store::SkyJob& job, const Decision& d, const ClusterViews::Seen& seen, bool asked,
           std::time_t now);
  // A move asked for now (the dashboard's "move now"): weighed at once by
  // the same rules as the daemon's own moves, only without waiting for
  // migrate_after; what came of it is an event either way.
  bool TakeMoveAskedNow(store::SkyJob& job, const ClusterViews::Seen& seen, Decision* d);

  bool Visible(const std::string& sky_id);

  std::unique_ptr<Lifecycle> l_;
};

}  // namespace skyslurm::daemon
