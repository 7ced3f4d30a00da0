#include "broker/backend/slurm/array_throttle.h"

#include <string>

#include "broker/cluster/job_phase.h"
#include "broker/backend/slurm/slurm_state.h"

namespace skyslurm::backend {
namespace {

// The value of " Key=" on one line (the first word after it); "" if absent.
std::string_view FieldOf(std::string_view line, std::string_view key) {
  const std::string needle = std::string(key) + "=";
  std::size_t at = 0;
  while ((at = line.find(needle, at)) != std::string_view::npos) {
    if (at == 0 || line[at - 1] == ' ') break;
    at += needle.size();
  }
  if (at == std::string_view::npos) return {};
  std::string_view value = line.substr(at + needle.size());
  return value.substr(0, value.find_first_of(" \n"));
}

}  // namespace

bool LiveRecordsHaveThrottle(std::string_view text, std::int64_t limit) {
  bool any_record = false;
  const std::string wanted = std::to_string(limit);
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (FieldOf(line, "JobId").empty()) continue;
    any_record = true;
    const std::string_view state = FieldOf(line, "JobState");
    if (!IsLive(SlurmPhaseOf(state))) continue;
    if (FieldOf(line, "ArrayTaskThrottle") != wanted) return false;
  }
  return any_record;
}

}  // namespace skyslurm::backend
