// Parsers for the values of Slurm options, with Slurm's syntax and limits.
// Errors say what was expected; callers add where the value came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::job {

// A time limit in minutes; nullopt minutes means INFINITE/UNLIMITED.
struct TimeLimit {
  std::optional<std::int64_t> minutes;
  bool infinite() const { return !minutes.has_value(); }
  friend bool operator==(const TimeLimit&, const TimeLimit&) = default;
};
// "minutes", "minutes:seconds", "hours:minutes:seconds", "days-hours",
// "days-hours:minutes", "days-hours:minutes:seconds", "INFINITE",
// "UNLIMITED" or "-1". Seconds round up to a whole minute, as Slurm does.
Result<TimeLimit> ParseTimeLimit(std::string_view text);
// Slurm's own way of writing minutes: "30:00", "1-00:00:00", "UNLIMITED".
std::string FormatTimeLimit(const TimeLimit& limit);

// A memory size in megabytes: a number with an optional K, M, G or T suffix
// (default M), as --mem and --mem-per-cpu take it.
Result<std::int64_t> ParseMemoryMb(std::string_view text);

// --nodes: "N" or "MIN-MAX".
struct NodeCount {
  std::int64_t min = 1;
  std::int64_t max = 1;
  friend bool operator==(const NodeCount&, const NodeCount&) = default;
};
Result<NodeCount> ParseNodeCount(std::string_view text);

// A positive whole number (--ntasks, --cpus-per-task, ...).
Result<std::int64_t> ParsePositiveCount(std::string_view text);

// One element of a --gres list: name[:type][:count], "gres/" prefix allowed.
struct GresItem {
  std::string name;   // "gpu"
  std::string type;   // "" when none was given
  std::int64_t count = 1;
  std::string text;   // as written
  friend bool operator==(const GresItem&, const GresItem&) = default;
};
Result<std::vector<GresItem>> ParseGresList(std::string_view text);
std::string FormatGres(const GresItem& item);

// One element of --gpus/--gpus-per-node/--gpus-per-task: [type:]count.
struct GpuCount {
  std::string type;
  std::int64_t count = 0;
  friend bool operator==(const GpuCount&, const GpuCount&) = default;
};
Result<std::vector<GpuCount>> ParseGpuList(std::string_view text);

// The plain feature names in a --constraint expression ("a100&ib" ->
// a100, ib; "[rack1*2|rack2*2]" -> rack1, rack2).
std::vector<std::string> ConstraintFeatures(std::string_view expression);

}  // namespace skyslurm::job
