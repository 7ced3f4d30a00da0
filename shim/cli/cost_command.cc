#include "shim/cli/cost_command.h"

#include <fmt/format.h>
#include <json/json.h>

#include <cstdio>

#include "broker/cloud/bill.h"
#include "broker/place/placement.h"
#include "broker/place/spending.h"
#include "broker/util/timestamp.h"
#include "shim/cli/cluster_views.h"

namespace skyslurm::cli {

namespace {

std::string Hours(double seconds) { return fmt::format("{:.2f}", seconds / 3600); }

// "2026-12-01 00:00 UTC"
std::string UtcMinute(std::time_t t) {
  std::string text = FormatUtcTimestamp(t);
  text[10] = ' ';
  return text.substr(0, 16) + " UTC";
}

}  // namespace

int RunCost(const std::string& since_text, bool json) {
  const std::time_t now = std::time(nullptr);
  const std::optional<std::time_t> since = cloud::PeriodStart(since_text, now);
  if (!since || *since > now) {
    std::fprintf(stderr,
                 "skyslurm cost: --since %s: not a time (month, today, 7d, 24h, 2026-12-01 or "
                 "2026-12-01T06:00:00, UTC, not in the future)\n",
                 since_text.c_str());
    return 2;
  }
  auto ws = OpenWorkspace({});
  if (!ws.ok()) {
    std::fprintf(stderr, "skyslurm cost: %s\n", ws.status().message().c_str());
    return 2;
  }
  const place::Spending s = place::SpendingSince(*ws, *since, now, std::chrono::seconds(15));
  const std::string& currency = ws->policy.currency;
  if (json) {
    Json::Value root(Json::objectValue);
    root["since"] = Json::Int64{*since};
    root["now"] = Json::Int64{now};
    root["currency"] = currency;
    root["total"] = s.total();
    root["yours"] = s.mine();
    root["clusters"] = Json::Value(Json::arrayValue);
    for (const place::ClusterBill& c : s.clusters) {
      Json::Value v(Json::objectValue);
      v["cluster"] = c.cluster;
      v["amount"] = c.bill.amount;
      v["node_hours"] = c.bill.node_seconds / 3600;
      v["gpu_hours"] = c.bill.gpu_seconds / 3600;
      v["yours"] = c.mine();
      v["error"] = c.error;
      v["users"] = Json::Value(Json::objectValue);
      for (const auto& [user, amount] : c.bill.by_user) v["users"][user] = amount;
      v["jobs"] = Json::Value(Json::objectValue);
      for (const auto& [job, amount] : c.bill.by_job) v["jobs"][job] = amount;
      root["clusters"].append(v);
    }
    std::printf("%s", root.toStyledString().c_str());
    return 0;
  }
  std::printf("Billed by elastic clusters since %s:\n", UtcMinute(*since).c_str());
  if (s.clusters.empty()) {
    std::printf(
        "  no cluster is elastic and priced (clusters.<name>.cost with boot_time or "
        "ledger)\n");
    return 0;
  }
  std::printf("%-12s %10s %10s %12s %12s %12s\n", "CLUSTER", "NODE-HOURS", "GPU-HOURS", "COST",
              "YOURS", "UNUSED");
  int unreadable = 0;
  for (const place::ClusterBill& c : s.clusters) {
    if (!c.error.empty()) {
      std::printf("%-12s cannot be counted: %s\n", c.cluster.c_str(), c.error.c_str());
      ++unreadable;
      continue;
    }
    auto unused = c.bill.by_user.find("");
    std::printf(
        "%-12s %10s %10s %12s %12s %12s\n", c.cluster.c_str(), Hours(c.bill.node_seconds).c_str(),
        Hours(c.bill.gpu_seconds).c_str(), place::FormatCost(c.bill.amount, currency).c_str(),
        place::FormatCost(c.mine(), currency).c_str(),
        place::FormatCost(unused == c.bill.by_user.end() ? 0 : unused->second, currency).c_str());
  }
  std::printf("%-12s %10s %10s %12s %12s\n", "total", "", "",
              place::FormatCost(s.total(), currency).c_str(),
              place::FormatCost(s.mine(), currency).c_str());
  // A bill that could not be read is an answer with a hole: say so by exit.
  return unreadable == 0 ? 0 : 1;
}

}  // namespace skyslurm::cli
