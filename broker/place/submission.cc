#include "broker/place/submission.h"

#include <filesystem>

#include "broker/util/strings.h"

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

}  // namespace skyslurm::place
