// A cluster's job queue, as `squeue --json` (Slurm 22.05) reports it: what
// placement needs to account for the work ahead of a job, and what `status`
// reports for skyslurm's own jobs.
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
  // GPUs the job holds (running) or asks for (pending), in all.
  std::int64_t TotalGpus() const;
};

// Strict: a job without the fields used here is an error naming it.
Result<std::vector<QueuedJob>> ParseSqueueJson(std::string_view json);

// "gres:gpu:A100:4", "gres/gpu:a100=2", "gpu:2" -> type and count; nullopt
// when the TRES string asks for no GPU.
std::optional<std::pair<std::string, std::int64_t>> GpusInTres(std::string_view tres);

}  // namespace skyslurm::cluster
