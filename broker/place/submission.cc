#include "broker/place/submission.h"

#include <fmt/format.h>

#include <filesystem>

#include "broker/place/job_folder.h"
#include "broker/util/strings.h"
#include "broker/util/trace.h"

namespace skyslurm::place {

backend::SubmitSpec SpecFor(const job::Request& request, const translate::TranslatedJob& job,
                            const ClusterHandle& target, const SubmissionContext& context) {
  backend::SubmitSpec spec;
  spec.sky_id = context.sky_id;
  spec.job = job;
  if (!request.job_name && request.script_operand) {
    spec.default_job_name = std::filesystem::path(request.script_name).filename().string();
  }
  if (request.comment) spec.user_comment = *request.comment;
  spec.export_env = {
      {"SKYPILOT_TASK_ID", context.task_id.empty() ? context.sky_id : context.task_id},
      {"SKYSLURM_CLUSTER", target.name}};
  spec.export_env.insert(spec.export_env.end(), context.extra_env.begin(), context.extra_env.end());
  if (context.description != nullptr) {
    std::string addresses = cluster::NodeAddressMap(*context.description, job.partitions);
    if (!addresses.empty())
      spec.export_env.emplace_back("SKYSLURM_NODE_ADDRS", std::move(addresses));
  }
  if (request.export_env) {
    // As translated (paths in its values spelled for the target), else as given.
    spec.user_export = job.export_env.value_or(*request.export_env);
    // Names without a value take it from the submitter, wherever the job runs.
    for (const std::string& item : SplitList(*request.export_env)) {
      if (item == "ALL" || item == "NONE" || item.find('=') != std::string::npos) continue;
      if (context.env == nullptr) continue;
      if (auto it = context.env->find(item); it != context.env->end()) {
        spec.export_values.emplace_back(item, it->second);
      }
    }
  }
  const bool relative_chdir = request.chdir && !request.chdir->starts_with("/");
  if (!target.home) {
    // An absolute --chdir of the job's own (spelled for the target) wins.
    std::string workdir = request.chdir && !relative_chdir ? "" : target.settings.workdir;
    if (relative_chdir) workdir = (workdir.empty() ? "" : workdir + "/") + *request.chdir;
    spec.workdir = workdir;
  } else if (!context.submit_dir.empty()) {
    // Home, submitted from elsewhere (skyslurmd): where the user typed the
    // command, and with the user's environment, as sbatch would have.
    spec.workdir = !request.chdir   ? context.submit_dir
                   : relative_chdir ? context.submit_dir + "/" + *request.chdir
                                    : *request.chdir;
    if (context.env != nullptr) spec.environment = *context.env;
  }
  return spec;
}

std::string Submission::FolderNote() const {
  if (folder.reason.empty() || copied.empty()) return folder.reason;
  return fmt::format("{} ({})", folder.reason, copied);
}

std::string Submission::Workdir(const backend::Capabilities& caps) const {
  return spec.workdir.empty() ? caps.default_workdir : spec.workdir;
}

Submission PrepareSubmission(const Workspace& ws, const ClusterHandle& target,
                             const job::Request& request, const translate::TranslatedJob& job,
                             const SubmissionContext& context, const std::string& submit_dir) {
  Submission s;
  s.spec = SpecFor(request, job, target, context);
  s.folder = PlanJobFolder(ws, target, request, context.sky_id, submit_dir);
  ApplyJobFolder(s.folder, request, &s.spec);
  return s;
}

namespace {

// Its folder ahead of it: measured, packed into the job, or copied there.
Status SendFolder(Submission& s, const ClusterHandle& target, SubmissionSteps& steps,
                  bool send_folder) {
  s.stage = Submission::Stage::kFolder;
  if (send_folder && (s.folder.copy || s.folder.pack)) {
    SKY_RETURN_IF_ERROR(steps.CheckFolder(s.folder, target.name));
  }
  if (send_folder && s.folder.pack) {
    SKY_ASSIGN_OR_RETURN(s.spec.folder_archive, steps.PackFolder(s.folder, target.name));
    s.copied = config::DescribeBytes(s.spec.folder_archive.size()) + " packed";
  }
  s.stage = Submission::Stage::kBeforeSending;
  SKY_RETURN_IF_ERROR(steps.BeforeSending(s.spec));
  s.stage = Submission::Stage::kFolder;
  if (send_folder && s.folder.copy) {
    // The real clock, as the files' times are: what is newer there once the
    // job has ended, the job wrote.
    s.sent_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
    SKY_ASSIGN_OR_RETURN(s.copied, steps.CopyFolder(s.folder, target.name));
  }
  return OkStatus();
}

}  // namespace

Status Send(Submission& s, ClusterHandle& target, SubmissionSteps& steps,
            const SendOptions& options) {
  if (target.backend == nullptr) {
    return InternalError(fmt::format("cluster {} has no backend", target.name));
  }
  SKY_RETURN_IF_ERROR(SendFolder(s, target, steps, options.send_folder));
  s.stage = Submission::Stage::kSubmit;
  steps.Submitting(s.spec);
  {
    trace::Span span("submit to " + target.name);
    const EstimateWithSubmission* e = options.estimate ? &*options.estimate : nullptr;
    if (e != nullptr && e->plan != nullptr && e->plan->deferred) {
      auto both = target.backend->EstimateThenSubmit(s.spec, options.timeout);
      CompleteDeferredEstimate(*e->plan, both.estimate, *e->request, *e->catalog, *e->policy);
      s.key = std::move(both.key);
    } else {
      s.key = target.backend->Submit(s.spec, options.timeout);
    }
  }
  if (!s.key.ok()) return s.key.status();
  s.stage = Submission::Stage::kDone;
  return OkStatus();
}

}  // namespace skyslurm::place
