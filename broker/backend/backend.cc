#include "broker/backend/backend.h"

#include <fmt/format.h>


namespace skyslurm::backend {

Result<std::vector<JobInfo>> Backend::Jobs(std::chrono::milliseconds timeout) {
  SKY_ASSIGN_OR_RETURN(std::vector<JobInfo> all, Queue(timeout));
  std::erase_if(all, [](const JobInfo& j) { return j.sky_id.empty(); });
  return all;
}

std::string SkyTag(const std::string& sky_id) { return "skyslurm:" + sky_id; }

std::optional<std::string> SkyIdInComment(std::string_view comment) {
  const auto at = comment.find("skyslurm:sky-");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = comment.substr(at + 9);
  const auto end = rest.find_first_of(" \t;,");
  return std::string(rest.substr(0, end));
}


}  // namespace skyslurm::backend
