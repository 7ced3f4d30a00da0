// A placed job's folder on the cluster it goes to: the workdir decision
// (sync/workdir_plan.h) made from the workspace's view of that cluster, how
// rsync reaches it, and the submission spec it gives (where the job runs
// and where sbatch is run, so that SLURM_SUBMIT_DIR is that folder too).
// One definition for skyslurmd, the shim's direct submission and explain.
#pragma once

#include <chrono>
#include <string>

#include "broker/backend/backend.h"
#include "broker/job/request.h"
#include "broker/place/workspace.h"
#include "broker/sync/rsync.h"
#include "broker/sync/workdir_plan.h"

namespace skyslurm::place {

// The folder a job names for itself: --sky-workdir (relative to
// `submit_dir`, "~" the user's home here), else `submit_dir`; "" with
// --sky-workdir=none.
std::string JobFolder(const job::Request& request, const std::string& submit_dir,
                      const std::string& local_home);

sync::WorkdirPlan PlanJobFolder(const Workspace& ws, const ClusterHandle& target,
                                const job::Request& request, const std::string& sky_id,
                                const std::string& submit_dir);

// How rsync reaches `cluster` (its SSH entry), or why it cannot.
Result<sync::RsyncRemote> RemoteOf(const Workspace& ws, const std::string& cluster);

// The plan's folder measured against sync_limit: an error saying what to
// do when it holds more (nothing has been sent).
Status FolderFits(CommandRunner& runner, const Workspace& ws, const sync::WorkdirPlan& plan,
                  const std::string& cluster, std::chrono::milliseconds timeout);
// The plan's folder packed for a Kubernetes job: an error saying what to do
// when it is more than a ConfigMap holds.
Result<std::string> PackJobFolder(CommandRunner& runner, const Workspace& ws,
                                  const sync::WorkdirPlan& plan, const std::string& cluster,
                                  std::chrono::milliseconds timeout);

// The job runs in the plan's folder there (a relative --chdir below it; its
// own absolute --chdir still wins), and sbatch is run in it.
void ApplyJobFolder(const sync::WorkdirPlan& plan, const job::Request& request,
                    backend::SubmitSpec* spec);

}  // namespace skyslurm::place
