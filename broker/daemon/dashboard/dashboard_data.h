// What the dashboard shows (docs/dashboard.md), from what skyslurmd already
// knows: each cluster's card (its last probe and the last look at its
// queue), the GPU samples the charts are drawn from, and the jobs table
// (every job in every queue, and every sky job, ended ones too).
#pragma once

#include <chrono>
#include <ctime>
#include <vector>

#include "broker/daemon/dashboard/cluster_cards.h"
#include "broker/daemon/dashboard/job_table.h"
#include "broker/daemon/jobs/job_manager.h"
#include "broker/store/job_store.h"

namespace skyslurm::daemon {

class DashboardData {
 public:
  explicit DashboardData(JobManager& manager) : manager_(manager) {}

  // Every cluster's card, in configuration order.
  std::vector<ClusterCard> ClusterCards();
  // One look at every cluster's GPUs for the charts, at most once every
  // kPollsPerGpuSample polls (a minute at the default 5 s), the samples kept
  // kGpuSamplesKept; skyslurmd calls it after each look at the queues.
  void SampleGpus();
  static constexpr int kPollsPerGpuSample = 12;
  static constexpr std::chrono::hours kGpuSamplesKept{48};
  // Seconds between two samples.
  int gpu_sample_every() const;
  // The GPU samples since `since`, by cluster then time.
  std::vector<store::GpuSample> GpuHistory(std::time_t since);
  // Every row of the jobs table: the user's jobs in every queue (as
  // JobManager::Queue lists them, with their GPUs) and every sky job.
  std::vector<TableRow> JobTable();

 private:
  JobManager& manager_;
  std::time_t last_gpu_sample_ = 0;  // the daemon's loop only
};

}  // namespace skyslurm::daemon
