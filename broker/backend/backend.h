// The backend interface: one kind of infrastructure a job can be sent to.
// Slurm (local, or over SSH) now; Kubernetes and cloud later, as more
// implementations of the same interface. Every call has a deadline and
// answers with a Status a user can read.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "broker/cloud/node_time.h"
#include "broker/cluster/inventory.h"
#include "broker/cluster/job_phase.h"
#include "broker/job/request.h"
#include "broker/job/sky_id.h"
#include "broker/translate/translation.h"
#include "broker/util/status.h"

namespace skyslurm::backend {

// A job's phase, in the words every backend shares (cluster/job_phase.h).
using cluster::HasNodes;
using cluster::IsFinal;
using cluster::IsInfrastructureFailure;
using cluster::IsLive;
using cluster::IsWaiting;
using cluster::JobPhase;
using cluster::PhaseName;

// A Slurm job is always the pair (cluster, id): ids collide across clusters.
struct JobKey {
  std::string cluster;
  std::string job_id;
  std::string ToString() const { return cluster + ":" + job_id; }
  friend bool operator==(const JobKey&, const JobKey&) = default;
};

// What a kind of backend offers, declared by each backend (and by its kind's
// entry in the factory table, backend/factory/factory.h, for a cluster
// known only by its description): the planner, skyslurmd, sync and the
// dashboard decide by these, never by the kind's name. The defaults are
// Slurm's.
struct Capabilities {
  std::string kind = "slurm";  // the configuration's `kind`, for people to read
  // Features this backend cannot offer, each with why.
  std::vector<std::pair<std::string, std::string>> unsupported;
  // The cluster gives its jobs ids of its own (Slurm's job ids). Without:
  // the backend numbers them from SubmitSpec::native_id, which skyslurmd
  // gives, so that cluster:N always names one job in its store.
  bool own_job_ids = true;
  // How EstimateStart answers.
  enum class Estimates {
    // The cluster's scheduler is asked (sbatch --test-only) and answers
    // without the jobs pending ahead: the planner adds them
    // (place/start_estimate.h), and where the cluster's last look makes the
    // start certain it answers without asking (place/certain_start.h).
    kScheduler,
    // The backend answers from its own view, the work ahead counted.
    kOwnView,
  };
  Estimates estimates = Estimates::kScheduler;
  // How a job's folder reaches the cluster.
  enum class Folders {
    kCopied,  // rsync to its login node before the submission (sync/rsync.h)
    kPacked,  // in the job's own objects (SubmitSpec::folder_archive)
  };
  Folders folders = Folders::kCopied;
  // Where a job that names no folder runs there, for people to read ("its
  // image's working directory"); "" = the submit folder, as Slurm's.
  std::string default_workdir;
  // Its nodes' time can be billed: an elastic cluster's provider ledger and
  // its accounting (NodeUses), when its settings give a price.
  bool billing = true;
  // Job arrays run there (one job of many tasks, its indices spread).
  bool arrays = true;
  // Slurm's client commands (squeue, sacct, scontrol, scancel) run there
  // (RunClientCommand) for the routed jobs it holds.
  bool client_commands = true;
  // A cluster the pool overflows to: on a tie, one that is not wins.
  bool overflow = false;
  // How a SkyPilot task's `infra` names clusters of this kind ("slurm",
  // "k8s"); "" = it cannot.
  std::string skypilot_cloud = "slurm";
};

// What `skyslurm check` shows of a cluster: whether it answers the way
// every call will (connection, credentials, its controller), and what did.
struct CheckAnswer {
  std::string verdict = "ok";  // or what failed: "unreachable", "no answer", ...
  std::string access_note;     // how it is reached beyond its entry ("rest+")
  std::string detail;          // "slurm-wlm 22.05.8; 2 partitions, 3/3 nodes usable", or why not
  bool ok() const { return verdict == "ok"; }
};

struct StartEstimate {
  std::time_t start = 0;  // when the job would start (UTC epoch)
  std::string partition;  // where
  std::string nodes;
  std::string basis;  // how it was found: "sbatch --test-only", "free nodes now"...
  // The answer already counts the jobs pending ahead of this one. Slurm
  // 22.05's --test-only does not, so the planner adds them (start_estimate.h).
  bool counts_work_ahead = false;
};

struct SubmitSpec {
  std::string sky_id;  // sky-<yyyymmdd-HHMMSS>-<6 hex>
  translate::TranslatedJob job;
  std::string default_job_name;  // when the job sets none (Slurm's: the script's name)
  std::string user_comment;      // the job's own --comment, kept before the tag
  std::string workdir;           // where it runs there ("" = the default)
  // Where sbatch is run there ("" = where the backend's commands run): the
  // job's copied folder, so that SLURM_SUBMIT_DIR names it.
  std::string submit_dir;
  // The job's folder packed (tar.gz), for a backend that carries it in the
  // job's own objects (Kubernetes: unpacked into sync::kPodFolder).
  std::string folder_archive;
  std::vector<std::pair<std::string, std::string>> export_env;  // extra environment for the job
  // The job's own --export (from any origin), when it has one: merged with
  // export_env into the one --export the job is submitted with (sbatch keeps
  // only the last). Without it: ALL.
  std::optional<std::string> user_export;
  // Values of the variables user_export names without a value, as they are
  // where the user submits: given to sbatch's environment there, so that a
  // peer's job gets the submitter's values, not the login node's.
  std::vector<std::pair<std::string, std::string>> export_values;
  // The whole environment sbatch runs with, when it is not the calling
  // process's: a job kept home that skyslurmd submits gets the user's own
  // environment as typed, as sbatch's --export=ALL would have given it.
  std::optional<std::map<std::string, std::string>> environment;
  // The sky id was made for this very call, so no earlier attempt can have
  // left a job carrying it: the lookup that makes a retry idempotent is
  // skipped. Every retry (and anything resumed from saved state) leaves it false.
  bool first_attempt = false;
  // Whether the cluster may restart the job by itself (after a node failure,
  // a preemption). skyslurmd clears it for a managed job: it owns the
  // restarts, and a cluster's own would hide the failure. Slurm honours it
  // with --no-requeue; Kubernetes with backoffLimit 0 and restartPolicy Never.
  bool restartable = true;
  // For a cluster without job ids of its own (Kubernetes), the lowest number
  // the job may be given (skyslurmd's next, so that its own store never sees
  // a number twice); the backend gives one never given before in the
  // namespace, at least this. "" = no floor. Slurm gives its own ids.
  std::string native_id;
};

// A submission and the start estimate asked with it (EstimateThenSubmit).
struct EstimatedSubmission {
  Result<StartEstimate> estimate = UnavailableError("not asked");
  Result<JobKey> key = UnavailableError("not submitted");
};

struct JobInfo {
  JobKey key;
  std::string sky_id;  // "" when the job carries none
  JobPhase phase = JobPhase::kUnknown;
  std::string state;  // the backend's own word (Slurm's PENDING, REQUEUE_HOLD...), for display
  std::string reason;
  std::string partition;
  std::string user;
  std::string name;
  std::time_t submit_time = 0, start_time = 0, end_time = 0;
  int exit_code = 0;
  // An array's tasks folded into one row (array_tasks.h): how many of its
  // tasks are in view, by phase name ("PENDING" 6, "RUNNING" 2); empty for
  // a job that is not an array.
  std::map<std::string, std::int64_t> array_tasks;
  // The indices of its tasks still waiting to start, as Slurm writes them
  // ("5-9,12", without the throttle); "" when none, or not an array.
  std::string pending_tasks;
};

// Makes a job fit for one kind of cluster, or says why it cannot run there
// (SkyPilot's clouds answer feasibility the same way): a pure function of
// the request, the cluster's description and the site's settings. The
// translated job is the backend's own (sbatch options for Slurm); nothing
// above the backend reads it.
class JobTranslator {
 public:
  virtual ~JobTranslator() = default;
  virtual translate::Translation Translate(const job::Request& request,
                                           const cluster::Description& target,
                                           const translate::TranslateContext& context) const = 0;
};

class Backend : public JobTranslator {
 public:
  virtual const std::string& name() const = 0;
  // What it offers, and its kind's name (the configuration's `kind`).
  virtual Capabilities capabilities() const = 0;

  // The cluster now: description, node states, GPUs in use, the queue.
  virtual Result<cluster::Inventory> Probe(std::chrono::milliseconds timeout) = 0;

  // Reaches the cluster as every call will and says what answered. This
  // default probes it: "N partitions, a/b nodes usable".
  virtual CheckAnswer Check(std::chrono::milliseconds timeout);

  // When the cluster's own scheduler would start this job. FailedPrecondition
  // when that scheduler refuses the job outright (sbatch --test-only's no):
  // the job cannot run there as asked, and placement says so; any other
  // error is only no estimate.
  virtual Result<StartEstimate> EstimateStart(const translate::TranslatedJob& job,
                                              std::chrono::milliseconds timeout) = 0;

  // What Probe or EstimateStart would answer now from what the backend
  // already holds (a cache), without waiting and without asking the
  // cluster; nothing when only asking can tell. The planner takes these
  // answers on its own thread instead of starting one per question: in a
  // burst every decision asks every cluster, and almost all of them are
  // answered from memory. The defaults hold nothing.
  virtual std::optional<Result<cluster::Inventory>> ProbeAtOnce() { return std::nullopt; }
  virtual std::optional<StartEstimate> EstimateAtOnce(const translate::TranslatedJob& /*job*/) {
    return std::nullopt;
  }

  // Submits once: a job already carrying this sky id is returned instead of
  // a second one being created (a retried submission never duplicates),
  // unless spec.first_attempt says no earlier attempt exists.
  virtual Result<JobKey> Submit(const SubmitSpec& spec, std::chrono::milliseconds timeout) = 0;

  // For a job only this cluster can run (so no estimate has to come first to
  // choose it): asks when spec.job would start, then submits `spec` whatever
  // that answer was (the cluster has the last word), in one round trip where
  // the backend can. This default is EstimateStart, then Submit.
  virtual EstimatedSubmission EstimateThenSubmit(const SubmitSpec& spec,
                                                 std::chrono::milliseconds timeout);

  // The job just submitted as the next probe will list it (pending), for a
  // cached view to count it without asking the cluster again; nullopt when
  // the backend cannot tell (the view is then probed again).
  virtual std::optional<cluster::QueuedJob> AsQueued(const SubmitSpec& /*spec*/,
                                                     const JobKey& /*key*/) const {
    return std::nullopt;
  }

  // Every job in the cluster's queue (running, pending, and those ended a
  // short while ago), sky id or not; an array as its tasks (array_tasks.h).
  virtual Result<std::vector<JobInfo>> Queue(std::chrono::milliseconds timeout) = 0;

  // The jobs carrying a sky id, an array's tasks folded into one row
  // (FoldArrayTasks): a sky job's array is one job.
  Result<std::vector<JobInfo>> Jobs(std::chrono::milliseconds timeout);

  // Cancels a job; with only_if_pending a job that has started is left
  // running (scancel --state=PENDING) and the answer says so.
  virtual Status Cancel(const std::string& job_id, bool only_if_pending,
                        std::chrono::milliseconds timeout) = 0;

  // Holds a pending job, or exactly the pending tasks named ("452_[20-27]":
  // a task that started is left alone). Slurm 22.05's scancel
  // --state=PENDING of such tasks cancels the array's whole pending record
  // (16-27 for 20-27, found on the testbed), so a move of pending tasks
  // holds them first and then cancels only the held ones.
  virtual Status Hold(const std::string& /*job_id*/, std::chrono::milliseconds /*timeout*/) {
    return UnimplementedError(name() + " cannot hold a job");
  }

  // Releases what Hold held ("452_[20-27]").
  virtual Status Release(const std::string& /*job_id*/, std::chrono::milliseconds /*timeout*/) {
    return UnimplementedError(name() + " cannot release a job");
  }

  // Sets how many tasks of array `job_id` may run at once (its "%N", Slurm's
  // ArrayTaskThrottle): a spread array's share of its limit changes when
  // pending tasks move to another cluster with part of it.
  virtual Status SetArrayThrottle(const std::string& /*job_id*/, std::int64_t /*limit*/,
                                  std::chrono::milliseconds /*timeout*/) {
    return UnimplementedError(name() + " cannot change an array's task limit");
  }

  // The job's standard output file as it is now.
  virtual Result<std::string> Output(const std::string& job_id,
                                     std::chrono::milliseconds timeout) = 0;
  // Part of it: at most `max_bytes` from byte `offset` on (what a page
  // tailing the log has not seen), and the whole file's size now (smaller
  // than `offset`: it was cut or started again). This default reads it
  // whole (Output); a backend that can read from an offset where the file
  // is does so, never loading the whole log anywhere.
  struct OutputPart {
    std::string bytes;
    std::uint64_t size = 0;
  };
  virtual Result<OutputPart> OutputFrom(const std::string& job_id, std::uint64_t offset,
                                        std::size_t max_bytes, std::chrono::milliseconds timeout);

  // One of Slurm's client commands (squeue, sacct, scontrol, scancel) run
  // there as the user, with `argv` as typed and `env` added to the
  // environment it runs with; what it printed and its exit status, however
  // it ended. This default: unimplemented (not a Slurm cluster).
  virtual Result<CommandOutput> RunClientCommand(
      const std::vector<std::string>& /*argv*/,
      const std::vector<std::pair<std::string, std::string>>& /*env*/,
      std::chrono::milliseconds /*timeout*/) {
    return UnimplementedError(name() + " has no Slurm commands");
  }

  // Every user's jobs that held nodes from `since` on, with their nodes and
  // times, as the cluster's accounting has them: what an elastic cluster's
  // bill is attributed by (cloud/bill.h). This default: unimplemented.
  virtual Result<std::vector<cloud::NodeUse>> NodeUses(std::time_t since,
                                                       std::chrono::milliseconds timeout);
};

// The job just submitted as its translation said its queue lists it
// (TranslatedJob::queued), under its id and tag, submitted now: what
// AsQueued answers for a backend that knows.
cluster::QueuedJob QueuedAsSubmitted(const SubmitSpec& spec, const JobKey& key);

// The tag a routed job carries in its comment.
std::string SkyTag(const std::string& sky_id);
// The sky id in a comment, if any.
std::optional<std::string> SkyIdInComment(std::string_view comment);
// A new sky id (sky_id.h).
using skyslurm::NewSkyId;

}  // namespace skyslurm::backend
