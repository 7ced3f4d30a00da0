// Where a skyslurm Job on Kubernetes is in its life (cluster/job_phase.h),
// from the Job and its pods as the API shows them (pure). The native word
// kept beside the phase is the one kubectl would show: Pending,
// ImagePullBackOff, Running, Complete, Failed, DeadlineExceeded...
#pragma once

#include <json/json.h>

#include <ctime>
#include <string>
#include <vector>

#include "broker/cluster/job_phase.h"

namespace skyslurm::kube {

struct JobStatus {
  cluster::JobPhase phase = cluster::JobPhase::kUnknown;
  std::string state;   // native
  std::string reason;  // why, in the cluster's words
  std::time_t start = 0, end = 0;
  int exit_code = 0;  // a wait status, as Slurm's: exit code << 8
  // Since when a pod has been unable to pull its image (0: none is).
  std::time_t image_pull_stuck_since = 0;
};

// `pods`: the job's pods (any order).
JobStatus StatusOf(const Json::Value& job, const std::vector<Json::Value>& pods);

}  // namespace skyslurm::kube
