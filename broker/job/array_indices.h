// The task indices of a job array (--array), read as slurmctld reads them,
// and written back as Slurm writes them (squeue's and scontrol's ArrayTaskId).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::job {

// Slurm's largest MaxArraySize: no index is at or above it on any cluster.
inline constexpr std::int64_t kLargestMaxArraySize = 4'000'001;

struct ArrayIndices {
  std::vector<std::int64_t> indices;     // sorted, each once
  std::optional<std::int64_t> throttle;  // "%N": at most N tasks running at once
  friend bool operator==(const ArrayIndices&, const ArrayIndices&) = default;
};

// "0-15", "0,6,16-32", "0-15:4", "1-3:2,10", each with an optional "%N".
// Elements are separated by commas (empty ones skipped); each is MIN, or
// MIN-MAX with an optional :STEP (a step above 0; MAX at least MIN). Numbers
// are read as C's strtol reads them (blanks and a sign before, digits only
// after; none at all is 0, so "-" is 0-0), as slurmctld does; the text after
// '%' likewise, its trailing characters ignored, and a limit of 0 or below
// (or Slurm's INFINITE) is none. Indices must be below kLargestMaxArraySize;
// each cluster's own MaxArraySize is its placement's business.
// nullopt: no array at all, as sbatch takes an empty value or one of commas
// only. With '%' and no index ("%2"), the array is index 0, as slurmctld
// stores it. Errors say what was expected; callers add where it came from.
Result<std::optional<ArrayIndices>> ParseArrayIndices(std::string_view text);

// Slurm's way of writing a set of indices: runs of consecutive ones as
// "MIN-MAX", others alone, comma-separated ("1,3,5-7"); with the throttle,
// "%N" after them. Steps are written out ("0-8:3" is "0,3,6"), as Slurm
// writes short ones; it writes a longer array that is one stepped run with
// its step ("0-100:10"), the same tasks.
std::string FormatArrayIndices(std::span<const std::int64_t> indices);
std::string FormatArrayIndices(const ArrayIndices& array);

}  // namespace skyslurm::job
