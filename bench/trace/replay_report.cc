// Summarise and the table (replay_report.h).
#include "bench/trace/replay_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace skyslurm::trace {

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double rank = std::ceil(q * static_cast<double>(sorted.size()));
  const std::size_t at = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return sorted[std::min(at, sorted.size() - 1)];
}

PolicyStats Summarise(std::string_view policy, const Load& load, const SimResult& result,
                      const std::vector<ModelCluster>& clusters, double time_factor) {
  PolicyStats s;
  s.policy = std::string(policy);
  s.jobs = static_cast<int>(load.jobs.size());
  s.moves = result.moves;
  s.unplaced = result.unplaced;
  if (result.decisions > 0) {
    s.decision_us = result.decision_s * 1e6 / static_cast<double>(result.decisions);
  }
  const double window = load.window_s;
  std::map<std::string, double> busy;
  for (std::size_t i = 0; i < result.jobs.size(); ++i) {
    const JobOutcome& o = result.jobs[i];
    if (o.start == kNever) continue;
    s.waits.push_back((o.start - o.submit) * time_factor);
    if (o.end != kNever) s.makespan_s = std::max(s.makespan_s, o.end * time_factor);
    if (o.start < window && (o.end == kNever || o.end > window)) ++s.cut;
    const double until = std::min(o.end, window);
    if (until > o.start) busy[o.cluster] += (until - o.start) * load.jobs[i].gpus();
  }
  std::sort(s.waits.begin(), s.waits.end());
  s.started = static_cast<int>(s.waits.size());
  if (!s.waits.empty()) {
    s.mean_wait_s =
        std::accumulate(s.waits.begin(), s.waits.end(), 0.0) / static_cast<double>(s.waits.size());
  }
  s.median_wait_s = Quantile(s.waits, 0.5);
  s.p95_wait_s = Quantile(s.waits, 0.95);
  for (const ModelCluster& c : clusters) {
    const double capacity = static_cast<double>(c.nodes * c.gpus_per_node) * window;
    s.utilisation[c.name] = capacity > 0 ? busy[c.name] / capacity : 0;
  }
  return s;
}

std::string MarkdownTable(const std::vector<PolicyStats>& rows) {
  std::string out =
      "| policy | jobs | mean wait s | median wait s | p95 wait s | makespan s | "
      "GPU utilisation | moves | cut | not started |\n"
      "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|\n";
  for (const PolicyStats& r : rows) {
    std::string use;
    for (const auto& [cluster, share] : r.utilisation) {
      use += fmt::format("{}{} {:.0f}%", use.empty() ? "" : ", ", cluster, share * 100);
    }
    out += fmt::format("| {} | {} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {} | {} | {} | {} |\n",
                       r.policy, r.started, r.mean_wait_s, r.median_wait_s, r.p95_wait_s,
                       r.makespan_s, use, r.moves, r.cut, r.jobs - r.started - r.unplaced);
  }
  return out;
}

std::vector<std::pair<double, int>> BusyGpus(const Load& load, const SimResult& result,
                                             const std::string& cluster, double time_factor) {
  std::vector<std::pair<double, int>> deltas;
  for (std::size_t i = 0; i < result.jobs.size(); ++i) {
    const JobOutcome& o = result.jobs[i];
    if (o.cluster != cluster || o.start == kNever || o.start >= load.window_s) continue;
    deltas.emplace_back(o.start, load.jobs[i].gpus());
    deltas.emplace_back(std::min(o.end, load.window_s), -load.jobs[i].gpus());
  }
  std::sort(deltas.begin(), deltas.end());
  std::vector<std::pair<double, int>> steps = {{0, 0}};
  int busy = 0;
  for (const auto& [t, d] : deltas) {
    busy += d;
    if (steps.back().first == t * time_factor) {
      steps.back().second = busy;
    } else {
      steps.emplace_back(t * time_factor, busy);
    }
  }
  if (steps.back().first < load.window_s * time_factor) {
    steps.emplace_back(load.window_s * time_factor, busy);
  }
  return steps;
}

}  // namespace skyslurm::trace
