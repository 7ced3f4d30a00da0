// What a replay of a load under one policy comes to (issue 18): the waits
// (mean, median, p95), the makespan, each cluster's GPU utilisation over the
// window, the moves, the jobs cut at the window's end; the markdown table of
// the policies side by side; the series the plots draw. Times are reported
// in trace seconds (replay seconds times the time factor), so replays at
// different factors compare.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/trace/policy_sim.h"
#include "bench/trace/trace_load.h"

namespace skyslurm::trace {

struct PolicyStats {
  std::string policy;
  int jobs = 0;     // of the load
  int started = 0;  // the waits are theirs
  double mean_wait_s = 0, median_wait_s = 0, p95_wait_s = 0;
  double makespan_s = 0;  // from the window's start to the last end
  // Per cluster: its GPUs' busy share over the window (running jobs cut at
  // its end).
  std::map<std::string, double> utilisation;
  int moves = 0;
  int cut = 0;                // running at the window's end
  int unplaced = 0;           // no cluster could run them
  double decision_us = 0;     // per placement decision (0: not measured)
  std::vector<double> waits;  // sorted, trace seconds
};

PolicyStats Summarise(std::string_view policy, const Load& load, const SimResult& result,
                      const std::vector<ModelCluster>& clusters, double time_factor);

// One row per policy: | policy | jobs | mean wait s | median wait s |
// p95 wait s | makespan s | GPU utilisation | moves | cut | not started |
// (jobs: those started, whose waits these are; not started: by the end of
// the replay, left out of the waits).
std::string MarkdownTable(const std::vector<PolicyStats>& rows);

// The GPUs busy on `cluster` in time (trace seconds): a step at every start
// and end, up to the window's end.
std::vector<std::pair<double, int>> BusyGpus(const Load& load, const SimResult& result,
                                             const std::string& cluster, double time_factor);

// The q-quantile (0..1) of sorted values, by the nearest rank; 0 when none.
double Quantile(const std::vector<double>& sorted, double q);

}  // namespace skyslurm::trace
