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

// A memory size in megabytes, as --mem, --mem-per-cpu and --mem-per-gpu take
// it (Slurm's str_to_mbytes): a number with an optional K, M, G or T suffix
// in either case (default M), optionally followed by B ("24gb"); K rounds
// up to a whole megabyte.
Result<std::int64_t> ParseMemoryMb(std::string_view text);

// --nodes: "N" or "MIN-MAX", read as Slurm's verify_node_count reads it
// (blanks, a sign, a k or m multiplier; an empty or negative MIN is 1, a MAX
// of 0 is none, "0" is accepted).
struct NodeCount {
  std::int64_t min = 1;
  std::int64_t max = 1;
  friend bool operator==(const NodeCount&, const NodeCount&) = default;
};
Result<NodeCount> ParseNodeCount(std::string_view text);

// A positive whole number (--ntasks, --cpus-per-task, ...), read as Slurm's
// parse_int: blanks and a sign before it, nothing after; kept as Slurm's int
// keeps it (wrapped at 2^32), and refused when that is 0 or below.
Result<std::int64_t> ParsePositiveCount(std::string_view text);

// One element of a --gres list: name[:type][:count], read as slurmctld reads
// it (sbatch itself checks nothing): a second field
// that is not a count is a type with a count of 1; counts take suffix_mult's
// units (k = 1024, kb = 1000, ... up to p); empty elements are skipped, and
// so are elements with a count of 0; "none" is no GRES.
struct GresItem {
  std::string name;   // "gpu"
  std::string type;   // "" when none was given
  std::int64_t count = 1;
  std::string text;   // as written
  friend bool operator==(const GresItem&, const GresItem&) = default;
};
Result<std::vector<GresItem>> ParseGresList(std::string_view text);
std::string FormatGres(const GresItem& item);

// One element of --gpus/--gpus-per-node/--gpus-per-task/--gpus-per-socket:
// "type", "count" or "type:count", read as slurmctld reads the "gpu:<element>"
// GRES that sbatch makes of it ("h100" is one H100; "gpu:h100:2" is refused,
// as Slurm refuses it). Elements with a count of 0 are left out.
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
