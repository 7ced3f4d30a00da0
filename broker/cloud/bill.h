// What an elastic cluster billed over a period, priced, and whose it was:
// every power-up's node time (cloud/node_time.h) at its node's price.
#pragma once

#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/cloud/ledger.h"
#include "broker/cloud/node_time.h"

namespace skyslurm::cloud {

struct Bill {
  double amount = 0;                      // in the site's currency
  double node_seconds = 0;                // billed node time
  double gpu_seconds = 0;                 // the same, times each node's GPUs
  std::map<std::string, double> by_user;  // "" for node time no job used
  std::map<std::string, double> by_job;   // the cluster's job id -> amount
};

// How one power-up's node is priced: its GPUs (0 when it has none, priced
// as one) and the price of a GPU-hour there (0: free).
struct NodePrice {
  int gpus = 0;
  double per_gpu_hour = 0;
};

// The bill of `ledger` from `since` to `now`, each power-up's seconds
// charged to the jobs in `uses` as AttributeNodeSeconds does.
Bill BillOf(const std::vector<PowerUp>& ledger, const std::vector<NodeUse>& uses,
            const std::function<NodePrice(const PowerUp&)>& price_of, std::time_t since,
            std::time_t now);

// The start of the UTC day and of the UTC month that `now` is in.
std::time_t StartOfUtcDay(std::time_t now);
std::time_t StartOfUtcMonth(std::time_t now);

// When a period asked for begins: "month" (the UTC month's start), "today"
// (UTC midnight), a length back from `now` ("7d", "24h", "90m", "30s"), or
// a UTC date or time ("2026-12-01", "2026-12-01T06:00:00"); nullopt for
// anything else.
std::optional<std::time_t> PeriodStart(std::string_view when, std::time_t now);

}  // namespace skyslurm::cloud
