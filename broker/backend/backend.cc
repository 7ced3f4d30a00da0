#include "broker/backend/backend.h"

#include <fmt/format.h>

#include <random>

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

std::string NewSkyId(std::time_t now) {
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::random_device rd;
  std::uniform_int_distribution<unsigned> dist(0, 0xFFFFFF);
  return fmt::format("sky-{:04}{:02}{:02}-{:02}{:02}{:02}-{:06x}", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, dist(rd));
}

}  // namespace skyslurm::backend
