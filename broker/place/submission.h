// What a placed job is submitted with: the translated job for the chosen
// cluster, plus what travels with it (the sky id tag, the job's own comment
// and --export merged with skyslurm's variables, the working directory
// there). One definition for the shim's direct submission and skyslurmd's.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "broker/backend/backend.h"
#include "broker/job/request.h"
#include "broker/place/planner.h"

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
};

// The spec for `target`. The job's --wait/--quiet/--parsable are the
// submitter's to act on, not the remote sbatch's.
backend::SubmitSpec SpecFor(const job::Request& request, const translate::TranslatedJob& job,
                            const ClusterHandle& target, const SubmissionContext& context);

}  // namespace skyslurm::place
