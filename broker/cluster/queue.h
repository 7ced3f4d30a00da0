// A cluster's job queue: what placement needs to account for the work ahead
// of a job (its pending and running jobs) and what skyslurmd tracks (every
// job, with exit codes), both from squeue's formatted output, which honours
// a state filter. `squeue --json` (kept for fixtures and tools) ignores every
// filter in Slurm 22.05: on a busy cluster it is megabytes.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::cluster {

struct QueuedJob {
  std::string job_id;
  std::string state;        // PENDING, RUNNING, COMPLETED ...
  std::string reason;       // Resources, Priority, None ...
  std::string partition;
  std::string name;
  std::string user;
  std::string comment;
  std::string gpu_type;     // from tres_per_node / tres_per_job ("" = any or none)
  std::int64_t gpus_per_node = 0;
  std::int64_t gpus_per_job = 0;
  std::int64_t nodes = 1;
  std::time_t submit_time = 0;
  std::time_t start_time = 0;  // the backfill scheduler's estimate when pending
  std::time_t end_time = 0;
  std::int64_t time_limit_minutes = 0;  // 0: none known
  std::string nodelist;
  int exit_code = 0;
  // The array tasks this record stands for: a pending array is one record
  // ("609_[1-3]" is 3 tasks); 1 for everything else.
  std::int64_t tasks = 1;
  // GPUs the job holds (running) or asks for (pending), in all, per task.
  std::int64_t TotalGpus() const;
};

// Strict: a job without the fields used here is an error naming it.
Result<std::vector<QueuedJob>> ParseSqueueJson(std::string_view json);

// squeue's arguments (after the program) listing the pending and running
// jobs in the form ParseSqueueActive reads.
std::vector<std::string> SqueueActiveArgs();
// The same form for every job squeue still knows, ended ones included (a
// probe, whose lately ended jobs say how much of their limits jobs run, and
// the daemon's queue poll: compact, and filtered on the server, where
// `squeue --json` is megabytes on a busy cluster).
std::vector<std::string> SqueueAllArgs();
// Strict: a record that is not exactly the fields asked for is an error
// quoting it. Times are read as UTC (run squeue with TZ=UTC).
Result<std::vector<QueuedJob>> ParseSqueueActive(std::string_view text);

// The tasks of an array expression: "1-3" -> 3, "1,5,7-9%2" -> 5.
std::int64_t ArrayTaskCount(std::string_view expression);

// "gres:gpu:A100:4", "gres/gpu:a100=2", "gpu:2" -> type and count; nullopt
// when the TRES string asks for no GPU.
std::optional<std::pair<std::string, std::int64_t>> GpusInTres(std::string_view tres);

}  // namespace skyslurm::cluster
