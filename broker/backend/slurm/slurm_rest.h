// A job submission as slurmrestd (Slurm 22.05, OpenAPI v0.0.38) takes it:
// POST /slurm/v0.0.38/job/submit with {"script": ..., "job": {...}}, whose
// keys slurmrestd hands to the same option parser sbatch uses (so values
// stay in sbatch's own words). Pure: the submission and the login node's
// facts in, the request body (or why this job must go through sbatch) out.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "broker/backend/backend.h"
#include "broker/ssh/http_wire.h"
#include "broker/util/status.h"

namespace skyslurm::backend {

inline constexpr std::string_view kRestApi = "/slurm/v0.0.38";

// The OpenAPI versions skyslurm speaks to slurmrestd, newest last: only
// Slurm 22.05's v0.0.38 (23.02 on changed the submission's body to typed
// fields that drop unknown keys: docs/compatibility.md).
inline constexpr std::string_view kRestVersionsSpoken[] = {"v0.0.38"};

// The versions of Slurm's own paths (/slurm/vX/...) that a slurmrestd's
// /openapi/v3 document lists ("v0.0.40", ...), in order, once each.
Result<std::vector<std::string>> OfferedRestVersions(std::string_view openapi_json);
// "/slurm/<the newest version offered and spoken>"; NotFound naming both
// lists when there is none (the cluster is then ruled out: RestSpoken).
Result<std::string> ChooseRestApi(const std::vector<std::string>& offered);

// What sbatch would find on the login node and put in the job's
// environment: its own environment, SLURM_SUBMIT_HOST, SLURM_SUBMIT_DIR
// (its working folder unless --chdir), SLURM_UMASK.
struct LoginFacts {
  std::string hostname;
  std::string home;   // the folder sbatch runs in
  std::string umask;  // "0022"
  std::map<std::string, std::string> environment;
};

// The output of kLoginFactsCommand on the login node: its host name, umask
// and folder, a line each, then its environment as `env -0` writes it,
// base64-encoded (an agent's outputs stop at a NUL: read raw, every job
// through slurmrestd lost all of the login environment but its first
// variable, PATH and HOME included).
inline constexpr const char* kLoginFactsCommand = "hostname; umask; pwd; env -0 | base64 -w0";
Result<LoginFacts> ParseLoginFacts(std::string_view output);

// The request body for `spec`, or FailedPrecondition naming what slurmrestd
// cannot take (an option it has no key for or refuses, a SPANK plugin's
// option, --export other than ALL, script arguments): such a job goes
// through sbatch instead, exactly as before.
Result<std::string> RestSubmitBody(const SubmitSpec& spec, const LoginFacts& login);

// The job id from slurmrestd's answer to a submission, or its refusal in
// its own words. An answer without a job id created no job.
Result<std::string> RestSubmittedJobId(const ssh::HttpAnswer& answer);

// Slurm's release ("22.05.8") from slurmrestd's answer to a ping.
Result<std::string> RestRelease(const ssh::HttpAnswer& answer);

// Ok when slurmrestd's answer says the request succeeded, else its errors.
Status RestAnswerOk(const ssh::HttpAnswer& answer);

}  // namespace skyslurm::backend
