// skyslurmd's /metrics in Prometheus' text format (docs/site.md): what the
// store holds (jobs by state and cluster, placements by reason, moves and
// failovers), each cluster's reachability and probe time, submissions and
// their latency, lease takeovers and the store's statement latency. Made
// from plain inputs by a pure function; counts only, never a job or a user.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "broker/util/latency_histogram.h"

namespace skyslurm::daemon {

struct MetricsInput {
  std::map<std::pair<std::string, std::string>, std::int64_t> jobs;  // (state, cluster) -> n
  std::map<std::string, std::int64_t> events;                        // kind -> n
  struct Cluster {
    std::string name;
    bool reachable = false;
    double probe_seconds = -1;  // < 0: no probe yet
  };
  std::vector<Cluster> clusters;
  std::int64_t takeovers = 0;
  std::int64_t submissions_refused = 0;
  const LatencyHistogram* submissions = nullptr;  // accepted POST /v1/jobs
  const LatencyHistogram* store = nullptr;        // each statement
};

std::string RenderMetrics(const MetricsInput& in);

}  // namespace skyslurm::daemon
