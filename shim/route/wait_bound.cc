#include "shim/route/wait_bound.h"

#include <fmt/format.h>

namespace skyslurm::route {

WaitBound::WaitBound(std::optional<std::int64_t> time_limit_minutes, int cluster_dead_after_s,
                     std::time_t now)
    : bound_((time_limit_minutes ? *time_limit_minutes : 60) * 60 + cluster_dead_after_s),
      last_answer_(now) {}

std::optional<std::string> WaitBound::GiveUp(std::time_t now, const std::string& who,
                                             const std::string& job,
                                             const std::string& later) const {
  const std::int64_t silent = static_cast<std::int64_t>(now - last_answer_);
  if (silent <= bound_) return std::nullopt;
  return fmt::format(
      "{} has not answered about {} for {} s (the job's time limit plus cluster_dead_after: {} s); "
      "how it ended is not known here, and it may still run: {}",
      who, job, silent, bound_, later);
}

}  // namespace skyslurm::route
