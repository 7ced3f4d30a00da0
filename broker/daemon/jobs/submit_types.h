// A submission to skyslurmd and its answer (POST /v1/jobs, JobManager::Submit).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "broker/daemon/jobs/job_input.h"
#include "broker/daemon/jobs/parsed_jobs.h"
#include "broker/store/job_store.h"

namespace skyslurm::daemon {

struct SubmitRequest {
  std::string sky_id;  // made by the client, so that a retried request is the same job
  JobInput input;
  bool managed = false;
  // The input already read by the caller (the API reads it to answer): not
  // read again. Null: read here.
  std::shared_ptr<const ParsedJob> parsed;
  // Whose job it is: a site's daemon gives the user MUNGE named ("" = the
  // daemon's own user). Its commands run as them.
  std::string owner;
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

}  // namespace skyslurm::daemon
