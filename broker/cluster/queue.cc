#include "broker/cluster/queue.h"

#include <algorithm>

#include "broker/util/strings.h"

namespace skyslurm::cluster {
std::int64_t ArrayTaskCount(std::string_view expression) {
  expression = expression.substr(0, expression.find('%'));  // "%N": a throttle, not a count
  std::int64_t count = 0;
  for (const std::string& item : SplitList(expression)) {
    const auto dash = item.find('-');
    if (dash == std::string::npos) {
      ++count;
      continue;
    }
    // "lo-hi" or "lo-hi:step"; anything else a squeue never prints counts
    // as one task (a ':' before the '-' once read past the range's end).
    const auto colon = item.find(':');
    const std::string_view range = std::string_view(item).substr(0, colon);
    const auto range_dash = range.find('-');
    if (range_dash == std::string_view::npos) {
      ++count;
      continue;
    }
    const std::int64_t step =
        colon == std::string::npos
            ? 1
            : std::max<std::int64_t>(1, LeadingInt(std::string_view(item).substr(colon + 1)));
    const std::int64_t lo = LeadingInt(range.substr(0, range_dash)),
                       hi = LeadingInt(range.substr(range_dash + 1));
    // Bounded: an index is at most Slurm's MaxArraySize (4,000,001).
    constexpr std::int64_t kMost = std::int64_t{1} << 32;
    const std::int64_t span = hi >= lo ? (hi - lo) / step : 0;
    const std::int64_t tasks = span >= kMost ? kMost : span + 1;
    count = std::min(kMost, count + tasks);
  }
  return std::max<std::int64_t>(count, 1);
}

std::int64_t QueuedJob::TotalGpus() const {
  return gpus_per_job > 0 ? gpus_per_job : gpus_per_node * std::max<std::int64_t>(nodes, 1);
}

}  // namespace skyslurm::cluster
