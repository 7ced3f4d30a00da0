// A cluster's job queue, in words every backend shares: what placement needs
// to account for the work ahead of a job (its pending and running jobs) and
// what skyslurmd tracks (every job, with exit codes). Each backend reads its
// own queue into it (Slurm's squeue: backend/slurm/squeue.h).
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/cluster/job_phase.h"
#include "broker/util/status.h"

namespace skyslurm::cluster {

struct QueuedJob {
  std::string job_id;
  // A heterogeneous job's component ("N+K" in squeue): K, and job_id is N
  // for its first (the id sbatch printed), "N+K" for the others.
  std::optional<int> het_offset;
  // Where it is in its life: what every decision reads (the backend that
  // read the job sets it from its own words).
  JobPhase phase = JobPhase::kUnknown;
  std::string state;   // the backend's own word, for display: PENDING, RUNNING ...
  std::string reason;  // Resources, Priority, None ...
  std::string partition;
  std::string name;
  std::string user;
  std::string comment;
  std::string gpu_type;  // from tres_per_node / tres_per_job ("" = any or none)
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

// The tasks of an array expression: "1-3" -> 3, "1,5,7-9%2" -> 5.
std::int64_t ArrayTaskCount(std::string_view expression);

}  // namespace skyslurm::cluster
