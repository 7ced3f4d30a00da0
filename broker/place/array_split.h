// Spreading one job array over several clusters: which of its indices each
// cluster runs, from when each cluster starts each of its tasks (the same
// pending-work model as a single job's estimate: start_estimate.h). Every
// index goes to the cluster that starts it soonest, given the indices
// before it, so the array ends as early as the clusters allow; a cluster's
// MaxArraySize is never exceeded; a "%N" limit is shared out so that the
// parts together never run more than N tasks. Pure.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "broker/job/array_indices.h"
#include "broker/util/status.h"

namespace skyslurm::place {

// A cluster that can run the array's tasks.
struct SplitTarget {
  std::string cluster;
  std::time_t start = 0;  // its first task's start (Candidate::start)
  // When each task starts there, one after another (Candidate::task_starts);
  // empty: one task at a time from `start`, each after the one before.
  std::vector<std::time_t> task_starts;
  std::int64_t run_s = 3600;  // a task's time limit there
  // Its MaxArraySize: every index sent there must be below it.
  std::optional<std::int64_t> max_array_size;
};

// The indices one cluster runs.
struct ArrayPart {
  std::string cluster;
  std::vector<std::int64_t> indices;     // sorted
  std::optional<std::int64_t> throttle;  // its share of the array's "%N"
  std::time_t first_start = 0;           // its first task's expected start
  std::time_t last_start = 0;            // its last task's

  // As --array takes it: "0-15,48-63%4".
  std::string ArraySpec() const;
};

struct ArraySplit {
  std::vector<ArrayPart> parts;  // in the targets' order, none empty
  std::time_t last_start = 0;    // the array's last task's expected start
};

// `targets` in order of preference: the first wins a tie. An index no
// target can take (at or above every MaxArraySize) is an error that says
// so; so is an array without indices or targets.
Result<ArraySplit> SplitArray(const job::ArrayIndices& array,
                              const std::vector<SplitTarget>& targets);

// The same array kept whole on one target (what spreading is measured
// against): its last task's expected start.
std::time_t LastStartOn(const job::ArrayIndices& array, const SplitTarget& target);

}  // namespace skyslurm::place
