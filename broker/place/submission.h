// The one way a placed job is submitted, for skyslurmd and for a command
// that submits without it (`skyslurm __route`) alike: the spec for the
// chosen cluster (the translated job plus what travels with it: the sky id
// tag, the job's own comment and --export merged with skyslurm's
// variables, the working directory there), the job's folder there
// (job_folder.h), then the folder measured, packed or copied and the job
// submitted, each step through a caller's hooks, ending in one answer.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "broker/backend/backend.h"
#include "broker/job/request.h"
#include "broker/place/planner.h"
#include "broker/place/workspace.h"
#include "broker/sync/workdir_plan.h"

namespace skyslurm::place {

struct SubmissionContext {
  std::string sky_id;
  // The job's SKYPILOT_TASK_ID ("" = sky_id): a part of a spread array
  // carries the whole array's.
  std::string task_id;
  // The submitter's environment: values for the names the job's --export
  // lists without one.
  const std::map<std::string, std::string>* env = nullptr;
  // The submitter's working directory, when the submission does not run
  // there (skyslurmd): a job kept home runs in it. "" = the submitting
  // process's own.
  std::string submit_dir;
  // More variables for the job (SKYSLURM_RESTART_COUNT...).
  std::vector<std::pair<std::string, std::string>> extra_env;
  // The target's description as the plan read it: its nodes' addresses go
  // with the job (SKYSLURM_NODE_ADDRS, cluster::NodeAddressMap).
  const cluster::Description* description = nullptr;
};

// The spec for `target`. The job's --wait/--quiet/--parsable are the
// submitter's to act on, not the remote sbatch's.
backend::SubmitSpec SpecFor(const job::Request& request, const translate::TranslatedJob& job,
                            const ClusterHandle& target, const SubmissionContext& context);

// What differs between a submission's callers: skyslurmd records each step
// under its intent and copies a few folders at once per cluster; a command
// shows a progress line. A hook's error stops the submission: nothing of the
// job has been submitted then.
class SubmissionSteps {
 public:
  virtual ~SubmissionSteps() = default;
  // The folder measured against sync_limit before anything is sent.
  virtual Status CheckFolder(const sync::WorkdirPlan& folder, const std::string& cluster) = 0;
  // The folder packed for a backend that carries it in the job's own
  // objects: the archive.
  virtual Result<std::string> PackFolder(const sync::WorkdirPlan& folder,
                                         const std::string& cluster) = 0;
  // The last step before anything leaves this machine (skyslurmd writes its
  // intent here, and numbers a job for a cluster without ids of its own).
  virtual Status BeforeSending(backend::SubmitSpec& /*spec*/) { return OkStatus(); }
  // The folder copied there: what was sent, for people ("12 files, 1.2 MB").
  virtual Result<std::string> CopyFolder(const sync::WorkdirPlan& folder,
                                         const std::string& cluster) = 0;
  // Everything is there: the job goes now (a command says where).
  virtual void Submitting(const backend::SubmitSpec& /*spec*/) {}
};

// One job on its way to one cluster.
struct Submission {
  backend::SubmitSpec spec;
  sync::WorkdirPlan folder;
  // Where it stopped: its folder (measured, packed or copied: nothing was
  // submitted), the step before sending, the cluster's answer, or done.
  enum class Stage { kPrepared, kFolder, kBeforeSending, kSubmit, kDone };
  Stage stage = Stage::kPrepared;
  std::string copied;        // what reached the cluster ahead of the job ("" = nothing)
  std::int64_t sent_ns = 0;  // when its folder began to be copied (real clock; 0 = never)
  Result<backend::JobKey> key = UnavailableError("not submitted");

  // What became of its folder, for people: the plan's reason, with what was sent.
  std::string FolderNote() const;
  // Where it runs there, for people ("" = the cluster's default).
  std::string Workdir(const backend::Capabilities& caps) const;
};

// The spec and the folder: a submission ready to send. `submit_dir`: the
// folder the job was submitted from.
Submission PrepareSubmission(const Workspace& ws, const ClusterHandle& target,
                             const job::Request& request, const translate::TranslatedJob& job,
                             const SubmissionContext& context, const std::string& submit_dir);

// A plan whose choice's estimate goes with the submission
// (PlanOptions::estimate_with_submission), completed with its answer.
struct EstimateWithSubmission {
  Plan* plan = nullptr;
  const job::Request* request = nullptr;
  const catalog::AcceleratorCatalog* catalog = nullptr;
  const Policy* policy = nullptr;
};

struct SendOptions {
  std::chrono::milliseconds timeout{30'000};
  // Its folder measured, packed and copied (false: --test-only, which
  // submits nothing).
  bool send_folder = true;
  std::optional<EstimateWithSubmission> estimate;
};

// Measures, packs and copies its folder and submits it, through `steps`;
// `submission.stage` and `key` say how far it went. The error, if any,
// is the one that stopped it.
Status Send(Submission& submission, ClusterHandle& target, SubmissionSteps& steps,
            const SendOptions& options);

}  // namespace skyslurm::place
