#include "broker/daemon/slurm_front/submit_text.h"

#include <fmt/format.h>

namespace skyslurm::daemon {

namespace {

// The line sbatch prints for the job, and --parsable's.
struct IdText {
  std::string line;
  std::string parsable;
};
IdText SubmittedId(const store::SkyJob& job, config::SubmitOutput form) {
  if (job.global_id != 0 && form == config::SubmitOutput::kSingleCluster) {
    return {fmt::format("Submitted batch job {}\n", job.global_id),
            fmt::format("{}\n", job.global_id)};
  }
  const std::string id = job.global_id != 0 ? std::to_string(job.global_id) : job.native_id;
  return {fmt::format("Submitted batch job {} on cluster {}\n", id, job.cluster),
          fmt::format("{};{}\n", id, job.cluster)};
}

// A spread array: Slurm's line for its first part (the one a script reads),
// then where every part went.
SubmitText RenderSpread(const std::string& tool, const job::Request& request,
                        const SubmitAnswer& answer, bool quiet, config::SubmitOutput form) {
  SubmitText t;
  const store::SkyJob& job = answer.job;
  if (request.parsable) {
    // As Slurm prints it; the sky id, which names the whole array for
    // skyslurm's commands and --dependency, alone on stderr's first line.
    if (!job.native_id.empty()) t.out = SubmittedId(job, form).parsable;
    t.err = fmt::format("{}\n", job.sky_id);
    return t;
  }
  if (!quiet && !job.native_id.empty()) t.out = SubmittedId(job, form).line;
  if (quiet) return t;
  std::string where;
  for (const auto& p : answer.parts) {
    where += fmt::format(
        "{}{} {}", where.empty() ? "" : ", ",
        p.native_id.empty() ? p.sky_id + " (being submitted)" : p.cluster + ":" + p.native_id,
        p.indices);
  }
  t.err +=
      fmt::format("{}: skyslurm: {} is spread as {}: {} ({}); skyslurm queue shows it as one\n",
                  tool, request.script_name, job.sky_id, where, answer.summary);
  return t;
}

}  // namespace

SubmitText RenderSubmitted(const std::string& tool, const job::Request& request,
                           const SubmitAnswer& answer, config::SubmitOutput form) {
  SubmitText t;
  const store::SkyJob& job = answer.job;
  // -Q/--quiet silences our notes as it does the command's own.
  const bool quiet = request.EffectiveByName("quiet") != nullptr;
  if (job.native_id.empty() && store::IsFinalState(job.state)) {
    t.err = fmt::format("{}: error: skyslurm: {}\n", tool, job.reason);
    t.exit_code = 1;
    return t;
  }
  if (!answer.parts.empty()) return RenderSpread(tool, request, answer, quiet, form);
  if (job.native_id.empty()) {
    // Kept, not yet on a cluster (one stopped answering mid-submission):
    // the daemon finishes it. Never a "Submitted" line without a job.
    // --parsable: the sky id, which skyslurm's commands and a later job's
    // --dependency take, so that a chain of jobs in a script works.
    t.err +=
        fmt::format("{}: skyslurm: {} is accepted ({}); skyslurmd submits it: skyslurm status {}\n",
                    tool, job.sky_id, job.reason, job.sky_id);
    if (request.parsable) t.out = job.sky_id + "\n";
  } else if (request.parsable) {
    t.out = SubmittedId(job, form).parsable;
  } else if (!quiet) {
    t.out = SubmittedId(job, form).line;
  }
  if (quiet) return t;
  for (const auto& note : answer.notes)
    t.err += fmt::format("{}: skyslurm: warning: {}\n", tool, note);
  if (!request.parsable && !job.native_id.empty() && !answer.home) {
    // What became of its folder (copied where, or why not: workdir_plan.h).
    const std::string folder =
        !answer.folder.empty()
            ? answer.folder
            : fmt::format("it runs in {} there, and files beside the script are not copied",
                          answer.workdir.empty() ? "your home directory" : answer.workdir);
    t.err += fmt::format("{}: skyslurm: {} goes to cluster {} ({}); {}\n", tool,
                         request.script_name, job.cluster, answer.summary, folder);
  }
  if (!request.parsable && request.sky.managed) {
    t.err += fmt::format("{}: skyslurm: managed as {} ({}); skyslurm status {} shows its history\n",
                         tool, job.sky_id, answer.summary, job.sky_id);
  }
  return t;
}

}  // namespace skyslurm::daemon
