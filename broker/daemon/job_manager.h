// The heart of skyslurmd: submits sky jobs (the intent written before every
// remote action), watches every cluster's queue, and moves, re-places and
// restarts jobs by the failover policy (failover_policy.h), recording every
// decision with its reason. After a crash, Recover() settles every open
// intent from the clusters' own queues (each Slurm job carries its sky id)
// before anything new is done, so a job is never lost and never runs twice.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/backend/backend.h"
#include "broker/config/settings.h"
#include "broker/daemon/cluster_cards.h"
#include "broker/daemon/event_kind.h"
#include "broker/daemon/failover_policy.h"
#include "broker/daemon/job_input.h"
#include "broker/daemon/job_table.h"
#include "broker/daemon/slurm_commands.h"
#include "broker/job/sky_dependency.h"
#include "broker/job/sky_id.h"
#include "broker/place/explain_view.h"
#include "broker/place/workspace.h"
#include "broker/store/job_store.h"
#include "broker/sync/workdir_plan.h"
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
};

struct SubmitRequest {
  std::string sky_id;  // made by the client, so that a retried request is the same job
  JobInput input;
  bool managed = false;
};

struct SubmitAnswer {
  store::SkyJob job;
  std::string summary;             // why this cluster
  std::string workdir;             // where it runs there ("" = the default)
  std::string folder;              // what became of its folder (a peer): copied where, or why not
  bool home = false;               // it went to the home cluster
  std::vector<std::string> notes;  // what the user should know (modules left as written ...)
  // A spread array: its parts (each with its cluster, native id and
  // indices), the first as Slurm's own answer would name the job.
  std::vector<store::SkyJob> parts;
  std::string spread;  // how the spread beats keeping it whole, for the user
};

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

// Tracks the user's sky jobs across clusters. The state below is shared by
// its protocols, one file each: job_submission.cc, intent_recovery.cc,
// copy_cleanup.cc, job_moves.cc; job_manager.cc holds the rest.
class JobManager {
 public:
  JobManager(store::JobStore& store, place::Workspace& workspace, ManagerOptions options = {});

  // Places and submits a new sky job; the same sky id again answers with the
  // job as it is (a client's retry never makes a second job).
  Result<SubmitAnswer> Submit(const SubmitRequest& request);

  // Every id below may also be a global id (job/global_id.h), with an
  // array's task suffix ("805306445_7").
  // Cancels a sky job (every live copy), or a Slurm job named cluster:id.
  Status Cancel(const std::string& id);

  // A sky job with its history; `id` may also be cluster:id of one of its copies.
  Result<store::SkyJob> Find(const std::string& id);

  // The job's output as it is now, from whichever cluster it runs on.
  Result<std::string> Output(const std::string& id);

  // Every job of the user's on every cluster, and the sky jobs between two
  // copies; from the last look at the queues.
  // A spread array is one row (its tasks counted over all its parts, each
  // cluster's in the reason); with `expand`, a row per part.
  std::vector<QueueRow> Queue(bool expand = false);

  // Settles open intents left by a crash (or by a cluster that stopped
  // answering); answers the sky jobs whose intents remain open.
  std::set<std::string> Recover();

  // One look at every cluster, then the policy's decisions acted on.
  void Tick();

  // How a routed sbatch prints its job (skyslurm.yaml: submit_output).
  config::SubmitOutput submit_output() const { return ws_.config.settings.submit_output; }

  // Whether the site lets jobs be routed (skyslurm.yaml: routing).
  bool routing() const { return ws_.config.settings.routing; }
  // The currency of elastic clusters' prices (skyslurm.yaml: elastic).
  const std::string& currency() const { return ws_.policy.currency; }
  // The user's home folder (where a script given as text is explained from).
  const std::string& home_dir() const { return ws_.config.paths.home; }

  // The global id (job/global_id.h) of a cluster's job: 0 when the
  // cluster has no index or the id does not fit below 2^26.
  std::uint64_t GlobalIdOf(const std::string& cluster, const std::string& native_id) const;
  // The cluster and its own id that a global id names by arithmetic alone
  // (a job skyslurm may not track); nullopt for no cluster of this
  // configuration.
  std::optional<std::pair<std::string, std::string>> DecodeGlobalIdOf(
      std::uint64_t global_id) const;

  // Live sky jobs (not final).
  std::size_t LiveJobs();
  // squeue, sacct, scontrol or scancel (`tool`) with the user's arguments
  // and environment, for the routed jobs they name or list
  // (slurm_commands.h): each cluster's command for its jobs, the outputs
  // merged with the global ids in place.
  ClientCommandAnswer RunClientCommand(const std::string& tool,
                                       const std::vector<std::string>& args,
                                       const std::map<std::string, std::string>& env);

  // Every sky job, newest first; one's history and copies.
  std::vector<store::SkyJob> List();
  std::vector<store::Event> History(const std::string& sky_id);
  std::vector<store::Copy> CopiesOf(const std::string& sky_id);
  // A spread array's parts (none for any other job).
  std::vector<store::SkyJob> PartsOf(const std::string& sky_id);

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

  struct ClusterState {
    std::string name;
    std::time_t answered = 0;  // last answer (0: none yet)
    std::string error;         // why the last look failed
  };
  std::vector<ClusterState> ClusterStates();

  // What the daemon is doing for a job right now, for a client's progress
  // line ("copying ~/proj to beta: 45%"); "" when nothing long.
  std::string Activity(const std::string& sky_id);

  // The dashboard (dashboard_data.cc, docs/dashboard.md).
  // Every cluster's card, from its last probe and the last look at its queue.
  std::vector<ClusterCard> ClusterCards();
  // The GPU samples since `since`, by cluster then time.
  std::vector<store::GpuSample> GpuHistory(std::time_t since);
  // One look at every cluster's GPUs for the charts, at most once every
  // kPollsPerGpuSample polls (a minute at the default 5 s), the samples kept
  // kGpuSamplesKept; called by Tick.
  void SampleGpus();
  static constexpr int kPollsPerGpuSample = 12;
  static constexpr std::chrono::hours kGpuSamplesKept{48};
  // Seconds between two samples.
  int gpu_sample_every() const { return kPollsPerGpuSample * std::max(1, policy_.poll_interval); }
  // Every row of the jobs table: the user's jobs in every queue (as
  // Queue() lists them, with their GPUs) and every sky job, ended ones too.
  std::vector<TableRow> JobTable();
  // Asks for a pending job's move to be weighed at the next look, by the
  // same rules as the daemon's own (placement, migrate_gain, max_moves,
  // moves_per_cluster), without waiting for migrate_after. FailedPrecondition
  // (409) with the reason for a job that cannot move (ended, running,
  // pinned by --sky-infra, an array, held, out of moves).
  Status RequestMove(const std::string& id);
  // `skyslurm explain` of a sky job's input as it was given, or of a script
  // and arguments (the dashboard's "where would this start?").
  Result<place::ExplainText> ExplainJob(const std::string& id);
  Result<place::ExplainText> Explain(const JobInput& input);

 private:
  struct ClusterView {
    std::time_t answered = 0;  // last successful read
    // Last answer to a command of ours (a submission): a controller that
    // takes jobs is busy, not dead, however slow its queue reads are.
    std::time_t contacted = 0;
    std::time_t read_at = 0;  // when `jobs` was read
    bool answered_now = false;
    // When the first read that failed since the last answer was started
    // (0: none failed since). A look of the daemon's own that is slow (a
    // burst of jobs to record) must not count as the cluster's silence:
    // it is silent only for as long as it was asked and did not answer.
    std::time_t failing_since = 0;
    // Since when it answers (0: it does not, or never did).
    std::time_t up_since = 0;
    std::string error;
    std::vector<backend::JobInfo> jobs;
    std::string answer_error() const { return answered_now ? "" : error; }
    // When it was last heard from, by a read or an answer; 0: never.
    std::time_t heard() const { return std::max(answered, contacted); }
    // Since when it has been asked and not answered (0: it answers, or was
    // never asked yet).
    std::time_t silent_since() const {
      return answered_now ? 0 : SilentSince(heard(), failing_since);
    }
  };

  // Held from a placement's choice to its reservation (PlaceAndSubmit).
  std::mutex placing_mu_;
  std::time_t Now() const;
  backend::Backend* BackendOf(const std::string& cluster);
  std::mutex& LockFor(const std::string& sky_id);
  // Gives a job that just got its first copy (cluster, native_id) its
  // global id, inside the store transaction that records the copy.
  Status GiveGlobalId(store::SkyJob& job);
  // A global id as the ids below take it: the sky id it was given to (with
  // the same suffix), else the cluster:id it names; any other id as it is.
  std::string ResolveGlobalId(const std::string& id);
  Status Record(const store::SkyJob& job, EventKind kind, const std::string& detail,
                const std::string& cluster = "", const std::string& native_id = "");
  // scontrol update succeeded on the clusters in `done` for this routed
  // job (its parts, for a spread array): the update carried into the input
  // every later copy is submitted from, or the copy bound to its cluster
  // (job/job_update.h); recorded as `updated`. Called with the job locked.
  void CarryUpdate(const std::string& sky_id, const std::vector<std::string>& update_words,
                   const std::set<std::string>& done);
  // Places the job (clusters in `avoid` left out) and submits it; records
  // the new copy. `kind`: kSubmitted, kMoved, kRestarted or kReplaced.
  // Whether the job's last copy ran on a spot partition whose node was
  // taken back (or failed): its restart then prefers on-demand.
  bool ReclaimedFromSpot(const store::SkyJob& job);
  // The placement policy for a job placed or moved now: the site's and the
  // user's, the budgets' spend, and (estimates: calibrated) how each
  // cluster's estimates lately came true for the jobs in the store.
  place::Policy PolicyNow(std::chrono::milliseconds timeout);
  // `leaving`: the cluster a move takes the job from, placed on again only
  // when no other can run it (within the tie tolerance it could win back
  // the job the move cancelled there, losing its place in that queue).
  // `only`: the one cluster it may go to (a spread array's part, as the
  // split gave it); "" = any.
  Status PlaceAndSubmit(store::SkyJob& job, EventKind kind, const std::string& why,
                        const std::vector<std::string>& avoid, bool first_attempt,
                        const std::string& leaving = "", const std::string& only = "");
  // A new job array that several clusters start sooner together than any
  // one alone: recorded as a SPREAD job with a part per cluster, each part
  // submitted (array_spread.cc). Answers false, having done nothing, when
  // it is not worth spreading (the caller places it whole).
  Result<bool> SpreadArray(store::SkyJob& job, const job::Request& request, const JobInput& input);
  // The answer for a spread array: its parts, named by the first.
  SubmitAnswer SpreadAnswer(const store::SkyJob& job);
  // A part's tasks see the whole array's SLURM_ARRAY_TASK_MIN/MAX/COUNT: the
  // variables the plugin sets them from (spank/remote_context.cc).
  std::vector<std::pair<std::string, std::string>> WholeArrayEnv(const store::SkyJob& part);
  // A spread array once every part has ended: its final state.
  void SettleSpread(store::SkyJob& job);
  // A spread array's parts, and the ones of them holding any of `indices`
  // (with those indices), for cancel and logs of some tasks.
  struct TaskSelection {
    store::SkyJob part;
    std::vector<std::int64_t> indices;
  };
  Result<std::vector<TaskSelection>> SelectTasks(const std::string& sky_id,
                                                 const std::string& index_text);
  Status CancelTasks(const std::string& sky_id, const std::string& index_text);
  // A part of a spread array whose tasks have pended migrate_after: when
  // another cluster starts some of them now, those (the last) leave their
  // cluster (scancel --state=PENDING of them, under an intent) and go there
  // as a new part of the array (array_spread.cc).
  void WeighTaskMove(store::SkyJob& part, const backend::JobInfo& copy);
  // The rest of such a move from its intent (cluster and "N_[indices]"):
  // the tasks cancelled while still pending become a new part, submitted to
  // `target` ("" = wherever they start soonest); also what recovery does.
  void FinishTaskMove(store::SkyJob& part, const store::Intent& intent, const std::string& target,
                      const std::string& why);
  // A --dependency on sky jobs (job_dependency.cc): read and weighed now
  // against the store; `request` then carries what is left for sbatch
  // (Request::dependency_resolved). nullopt: it names no sky job. The error
  // names the option's line.
  struct SkyDependencyNow {
    job::SkyDependency read;
    job::DependencyVerdict verdict;
    bool satisfied() const { return verdict.status == job::DependencyStatus::kSatisfied; }
  };
  Result<std::optional<SkyDependencyNow>> ResolveDependency(job::Request& request);
  // PlaceAndSubmit of a job whose input, request and dependency the caller
  // has read already (a new submission: each read once, not again here).
  Status PlaceAndSubmitRead(store::SkyJob& job, const JobInput& input, const job::Request& request,
                            const std::optional<SkyDependencyNow>& dependency, EventKind kind,
                            const std::string& why, const std::vector<std::string>& avoid,
                            bool first_attempt, const std::string& leaving = "",
                            const std::string& only = "");
  // Held back until its sky jobs answer the dependency: PENDING with no
  // cluster and Slurm's reason (Dependency, DependencyNeverSatisfied), an
  // event when the reason changes; never satisfied with
  // --kill-on-invalid-dep=yes, cancelled.
  Status WaitForDependency(store::SkyJob& job, const job::Request& request,
                           const job::DependencyVerdict& verdict);
  // A job held back for its dependency, weighed on each tick: once the sky
  // jobs answer it, submitted (spread, if an array that gains by it).
  void ReleaseDependent(store::SkyJob& job);
  // Whether the job is held back for its dependency (never submitted yet).
  static bool WaitsForDependency(const store::SkyJob& job) {
    return job.state == "PENDING" && job.cluster.empty() && job.submitted == 0;
  }
  // The job leaves its current copy (recorded as `copy_state`) for `state`,
  // in one transaction with the event.
  Status DetachCopy(store::SkyJob& job, const std::string& copy_state, const std::string& state,
                    const std::string& reason, EventKind kind, const std::string& detail);
  void WeighMove(store::SkyJob& job, const std::string& why);
  // Answers whether the job's current copy changed.
  bool ResolveCopies(store::SkyJob& job, const std::vector<backend::JobInfo>& live);
  // Cancels every copy of the job that may be live; answers the clusters
  // that could not be asked (their copies are left as they are).
  std::vector<std::string> CancelCopies(const store::SkyJob& job);
  // Copies left on a cluster that stopped answering, once it answers: a
  // live one is cancelled unless it is the job's current copy.
  void SettleStaleCopies();
  void SettleIntent(const store::Intent& intent);
  // When an open intent is settled, for its event: "after a restart of
  // skyslurmd" for one open when this daemon started, else "once <cluster>
  // answered" (or "on a later look").
  std::string SettledWhen(const store::Intent& intent) const;
  std::vector<std::string> DeadClusters();
  // The job's folder for a cluster (place/job_folder.h, folder_copy.cc):
  // measured against sync_limit before anything is sent (the error says
  // what to do), then copied under the submission's intent, recorded as an
  // event; answers what was sent.
  Status CheckFolderSize(const sync::WorkdirPlan& plan, const std::string& cluster);
  Result<std::string> CopyFolder(store::SkyJob& job, const sync::WorkdirPlan& plan,
                                 const std::string& cluster);
  // A job that asked for it (--sky-sync-back) and ran in a copied folder:
  // the matching files fetched into the folder it came from, recorded.
  void FetchBack(store::SkyJob& job);
  // The folder a submission of the job to `cluster` copies to, and from
  // (("", "") when it copies none): for a copy adopted after a crash.
  std::pair<std::string, std::string> CopiedFolder(const store::SkyJob& job,
                                                   const std::string& cluster);
  // A Kubernetes job's folder, packed for its ConfigMap (no larger than a
  // ConfigMap holds: the error says what to do), recorded as copied.
  Result<std::string> PackFolder(store::SkyJob& job, const sync::WorkdirPlan& plan,
                                 const std::string& cluster);

  store::JobStore& store_;
  place::Workspace& ws_;
  ManagerOptions options_;
  config::FailoverSettings policy_;
  // Each cluster's index in global ids (registry.h: JobIdIndices).
  const std::map<std::string, int> job_id_indices_;
  std::atomic<bool> routed_marked_{false};
  std::set<std::int64_t> inherited_intents_;  // open when this daemon started

  std::mutex locks_mu_;
  std::map<std::string, std::unique_ptr<std::mutex>> locks_;
  std::mutex view_mu_;
  // The last number given to a job on each cluster without ids of its own.
  std::mutex ids_mu_;
  std::map<std::string, std::int64_t> last_native_id_;
  std::map<std::string, ClusterView> views_;
  std::map<std::string, std::vector<std::time_t>> moves_into_;  // back-pressure
  std::map<std::string, std::time_t> last_weighed_;             // tick thread only
  std::map<std::string, std::future<void>> refreshing_;         // tick thread only: probes
  std::map<std::string, std::future<Result<std::vector<backend::JobInfo>>>> reading_;  // queues
  std::map<std::string, std::time_t> reading_since_;  // when each read began
  static constexpr std::ptrdiff_t kCopiesPerCluster = 4;
  std::mutex copy_slots_mu_;
  std::map<std::string, std::unique_ptr<std::counting_semaphore<kCopiesPerCluster>>> copy_slots_;
  std::mutex activity_mu_;
  std::map<std::string, std::string> activity_;  // sky id -> what is being done
  int weighed_this_tick_ = 0;
  // Moves asked for now (RequestMove), taken by the next look.
  std::mutex move_asked_mu_;
  std::set<std::string> move_asked_;
  bool TakeMoveAsked(const std::string& sky_id);
  std::time_t last_gpu_sample_ = 0;  // tick thread only
  // The working directory of the last submission (under the job's lock).
  thread_local static std::string last_answer_workdir_;
  thread_local static bool last_answer_home_;
  thread_local static std::vector<std::string> last_answer_notes_;
  thread_local static std::string last_answer_folder_;
};

}  // namespace skyslurm::daemon
