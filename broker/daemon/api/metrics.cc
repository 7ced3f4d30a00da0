#include "broker/daemon/api/metrics.h"

#include <fmt/format.h>

#include <set>

namespace skyslurm::daemon {
namespace {

// What placed a job, by the kind of event that recorded it (event_kind.h).
const std::map<std::string, std::string>& PlacementReasons() {
  static const std::map<std::string, std::string> reasons = {
      {"submitted", "submitted"}, {"moved", "moved"},   {"re-placed", "cluster_lost"},
      {"restarted", "restarted"}, {"spread", "spread"}, {"tasks-moved", "tasks_moved"},
  };
  return reasons;
}

void Header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

std::int64_t EventsOf(const MetricsInput& in, const std::string& kind) {
  auto it = in.events.find(kind);
  return it == in.events.end() ? 0 : it->second;
}

}  // namespace

std::string RenderMetrics(const MetricsInput& in) {
  std::string out;
  Header(out, "skyslurm_jobs", "gauge", "Sky jobs in the store by state and cluster.");
  for (const auto& [key, n] : in.jobs) {
    out += fmt::format("skyslurm_jobs{{state={},cluster={}}} {}\n", PrometheusLabel(key.first),
                       PrometheusLabel(key.second), n);
  }
  Header(out, "skyslurm_placements_total", "counter",
         "Jobs placed on a cluster, by what placed them.");
  for (const auto& [kind, reason] : PlacementReasons()) {
    out += fmt::format("skyslurm_placements_total{{reason={}}} {}\n", PrometheusLabel(reason),
                       EventsOf(in, kind));
  }
  Header(out, "skyslurm_moves_total", "counter",
         "Pending jobs moved to a cluster that starts them sooner.");
  out += fmt::format("skyslurm_moves_total {}\n", EventsOf(in, "moved"));
  Header(out, "skyslurm_failovers_total", "counter",
         "Jobs placed again because their cluster stopped answering.");
  out += fmt::format("skyslurm_failovers_total {}\n", EventsOf(in, "re-placed"));
  Header(out, "skyslurm_cluster_up", "gauge",
         "Whether the cluster's queue answered the last look.");
  for (const auto& c : in.clusters) {
    out += fmt::format("skyslurm_cluster_up{{cluster={}}} {}\n", PrometheusLabel(c.name),
                       c.reachable ? 1 : 0);
  }
  Header(out, "skyslurm_cluster_probe_seconds", "gauge", "How long the cluster's last probe took.");
  for (const auto& c : in.clusters) {
    if (c.probe_seconds < 0) continue;
    out += fmt::format("skyslurm_cluster_probe_seconds{{cluster={}}} {}\n", PrometheusLabel(c.name),
                       PrometheusNumber(c.probe_seconds));
  }
  Header(out, "skyslurm_lease_takeovers_total", "counter",
         "Jobs this replica took over from a replica whose lease lapsed.");
  out += fmt::format("skyslurm_lease_takeovers_total {}\n", in.takeovers);
  Header(out, "skyslurm_submissions_refused_total", "counter",
         "Submissions this replica answered with an error.");
  out += fmt::format("skyslurm_submissions_refused_total {}\n", in.submissions_refused);
  if (in.submissions != nullptr) {
    out +=
        in.submissions->Render("skyslurm_submission_seconds",
                               "Time to accept a submission (placed and submitted), this replica.");
  }
  if (in.store != nullptr) {
    out += in.store->Render("skyslurm_store_statement_seconds",
                            "Round trip of each statement to the state database, this replica.");
  }
  return out;
}

}  // namespace skyslurm::daemon
