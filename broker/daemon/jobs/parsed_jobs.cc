#include "broker/daemon/jobs/parsed_jobs.h"

namespace skyslurm::daemon {

Result<std::shared_ptr<const ParsedJob>> ParseJob(JobInput input) {
  SKY_ASSIGN_OR_RETURN(job::Request request, job::ParseRequest(input.ToRequestInput()));
  return std::make_shared<const ParsedJob>(ParsedJob{std::move(input), std::move(request)});
}

Result<std::shared_ptr<const ParsedJob>> ParsedJobs::Of(const store::SkyJob& job) {
  {
    std::lock_guard lock(mu_);
    auto it = kept_.find(job.sky_id);
    if (it != kept_.end() && it->second.input_json == job.input_json) return it->second.parsed;
  }
  SKY_ASSIGN_OR_RETURN(JobInput input, JobInputFromText(job.input_json));
  SKY_ASSIGN_OR_RETURN(std::shared_ptr<const ParsedJob> parsed, ParseJob(std::move(input)));
  Keep(job.sky_id, job.input_json, parsed);
  return parsed;
}

void ParsedJobs::Keep(const std::string& sky_id, const std::string& input_json,
                      std::shared_ptr<const ParsedJob> parsed) {
  std::lock_guard lock(mu_);
  kept_[sky_id] = {input_json, std::move(parsed)};
}

void ParsedJobs::KeepOnly(const std::set<std::string>& live) {
  std::lock_guard lock(mu_);
  std::erase_if(kept_, [&](const auto& kept) { return !live.contains(kept.first); });
}

}  // namespace skyslurm::daemon
