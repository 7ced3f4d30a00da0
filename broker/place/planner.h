// Deciding where a job goes, against live clusters: probe every candidate
// cluster at once (each with a deadline; a dead or slow one is reported
// unreachable with its reason and never stalls the others), translate the
// job for each, ask each cluster's own scheduler when each partition that
// can run it would start it (Backend::EstimateStart, all at once), account
// for the work pending ahead where the cluster's answer does not
// (start_estimate.h), and place (placement.h). It never sees a backend's own
// options (sbatch's, a Kubernetes manifest).
#pragma once

#include <chrono>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/backend/backend.h"
#include "broker/catalog/accelerators.h"
#include "broker/cluster/inventory.h"
#include "broker/config/settings.h"
#include "broker/job/request.h"
#include "broker/place/elastic.h"
#include "broker/place/placement.h"
#include "broker/translate/translation.h"

namespace skyslurm::place {

struct ClusterHandle {
  std::string name;
  bool home = false;
  // What its kind of backend offers (Slurm's by default): what every
  // decision about the cluster reads, never its kind's name.
  backend::Capabilities caps;
  config::ClusterSettings settings;
  backend::Backend* backend = nullptr;  // a live cluster
  // How a job is made fit for this cluster, or refused with reasons: its
  // backend (live) or its kind's translator (offline). Never null.
  std::shared_ptr<const backend::JobTranslator> translator;
  // Keeps `backend` (and what it wraps) alive for as long as a probe or an
  // estimate thread still uses it: a late thread outlives the call that
  // abandoned it, and may outlive the Workspace too (explain exits).
  std::shared_ptr<const void> backend_owner;
  std::optional<cluster::Description> offline;  // or only its description
  // The named roots of its filesystems for the user (their login name
  // there), and whether a script's own paths are rewritten for it.
  translate::PathRoots roots;
  bool rewrite_script_paths = false;
  std::string login;        // the user's login name there
  std::string excluded;     // policy said no
  std::string unavailable;  // no way to reach it
};

struct PlanOptions {
  std::chrono::milliseconds probe_timeout{15'000};
  std::chrono::milliseconds estimate_timeout{15'000};
  bool estimate = true;  // false: feasibility only
  Policy policy;
  std::vector<std::string> only;  // --sky-any-cluster=a,b
  std::string pinned;             // --sky-infra=NAME
  std::time_t now = 0;            // 0: the clock
  // A job array: lay out when each of its tasks starts on each candidate
  // (Candidate::task_starts), for spreading it (array_split.h).
  bool lay_out_array_tasks = false;
  // A job only one candidate can run, whose start its cluster's last look
  // does not make certain, is not estimated here: no choice waits on the
  // answer. The plan chooses it and names it (Plan::deferred); the caller
  // submits with Backend::EstimateThenSubmit (one round trip, not two) and
  // then calls CompleteDeferredEstimate. For submissions, never for explain.
  bool estimate_with_submission = false;
  // A move's weighing: the cluster the job pends on and its job id there.
  // That cluster's estimate is the job's own place in its queue, and counts
  // the jobs queued behind it (Candidate::gpus_queued_behind).
  struct PendingCopy {
    std::string cluster;
    std::string job_id;
  };
  std::optional<PendingCopy> pending_copy;
};

struct ClusterResult {
  std::string name;
  std::optional<cluster::Inventory> inventory;
  std::string unreachable;
  std::optional<translate::Translation> translation;
  std::chrono::milliseconds probe_took{0};
};

struct Plan {
  std::time_t now = 0;
  bool run_times_from_history = false;                   // Policy::run_times_from_history
  bool lay_out_array_tasks = false;                      // PlanOptions::lay_out_array_tasks
  std::map<std::string, EstimateScale> estimate_scales;  // Policy::estimate_scales
  std::optional<PlanOptions::PendingCopy> pending_copy;  // PlanOptions::pending_copy
  std::vector<ClusterResult> clusters;
  std::vector<Candidate> candidates;
  // The job as each candidate would get it (empty for candidates that are out).
  std::vector<std::optional<translate::TranslatedJob>> jobs;
  // Per candidate: what is known of it as an elastic cluster (its boot,
  // spot, price), and how the job meets its nodes (what its estimate and
  // cost count: a boot, whole nodes, a share of nodes others keep up).
  std::vector<ElasticFacts> elastic;
  std::vector<NodeStart> node_start;
  // Per candidate sharing nodes (kShares, kSharesBooting): until when the
  // jobs on each keep it up (NodesKeptUpUntil); empty otherwise.
  std::vector<std::vector<std::time_t>> kept_up_until;
  Decision decision;
  std::chrono::milliseconds took{0};
  // The chosen candidate's estimate, left to the submission
  // (PlanOptions::estimate_with_submission).
  struct DeferredEstimate {
    std::size_t candidate = 0;
    std::size_t cluster = 0;
  };
  std::optional<DeferredEstimate> deferred;

  const translate::TranslatedJob* chosen_job() const {
    return decision.chosen && jobs[*decision.chosen] ? &*jobs[*decision.chosen] : nullptr;
  }
};

// Probes every live, not excluded cluster at once; each answers within
// `timeout` or is reported unreachable.
std::vector<ClusterResult> ProbeAll(const std::vector<ClusterHandle>& clusters,
                                    std::chrono::milliseconds timeout);

// Probe and estimate threads still running: those abandoned past their
// deadline. A command that ends while one runs leaves with _exit (after
// flushing its streams): exit() would tear down OpenSSL and libssh under the
// thread's feet.
std::size_t TasksStillRunning();

// The job's time limit on a cluster's partition, in minutes: its own, else
// the partition's default, else its maximum, else an hour.
std::int64_t JobMinutes(const job::Request& r, const cluster::Description& d,
                        const std::string& partition);

Plan MakePlan(const job::Request& request, std::vector<ClusterHandle>& clusters,
              const catalog::AcceleratorCatalog& catalog, const std::string& home,
              const PlanOptions& options);

// A deferred estimate's answer, as MakePlan would have taken it: the chosen
// candidate's start, its basis and the decision's words. Without an answer
// the choice stands (the job is submitted) with no start, and says why.
void CompleteDeferredEstimate(Plan& plan, const Result<backend::StartEstimate>& answer,
                              const job::Request& request,
                              const catalog::AcceleratorCatalog& catalog, const Policy& policy);

}  // namespace skyslurm::place
