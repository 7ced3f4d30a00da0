#include "broker/cloud/bill.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>

#include "broker/cloud/cost.h"
#include "broker/util/timestamp.h"

namespace skyslurm::cloud {

Bill BillOf(const std::vector<PowerUp>& ledger, const std::vector<NodeUse>& uses,
            const std::function<NodePrice(const PowerUp&)>& price_of, std::time_t since,
            std::time_t now) {
  std::map<std::string, std::string> user_of;
  for (const NodeUse& u : uses) user_of[u.job_id] = u.user;
  Bill bill;
  for (const PowerUp& up : ledger) {
    // One power-up at a time: each has its node's price.
    const NodePrice price = price_of(up);
    for (const auto& [job, seconds] : AttributeNodeSeconds({up}, uses, now, since)) {
      const double amount = NodeTimeCost(seconds, price.gpus, price.per_gpu_hour);
      bill.amount += amount;
      bill.node_seconds += seconds;
      bill.gpu_seconds += seconds * std::max(price.gpus, 1);
      bill.by_user[job.empty() ? "" : user_of[job]] += amount;
      if (!job.empty()) bill.by_job[job] += amount;
    }
  }
  return bill;
}

std::time_t StartOfUtcDay(std::time_t now) { return now - now % 86400; }

std::time_t StartOfUtcMonth(std::time_t now) {
  std::tm tm{};
  gmtime_r(&now, &tm);
  tm.tm_mday = 1;
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  return timegm(&tm);
}

std::optional<std::time_t> PeriodStart(std::string_view when, std::time_t now) {
  if (when == "month") return StartOfUtcMonth(now);
  if (when == "today") return StartOfUtcDay(now);
  if (when.size() >= 2 && std::isdigit(static_cast<unsigned char>(when.front())) &&
      std::string_view("dhms").find(when.back()) != std::string_view::npos) {
    std::int64_t n = 0;
    for (char c : when.substr(0, when.size() - 1)) {
      if (!std::isdigit(static_cast<unsigned char>(c)) || n > 100'000'000) return std::nullopt;
      n = n * 10 + (c - '0');
    }
    const std::int64_t unit = when.back() == 'd'   ? 86400
                              : when.back() == 'h' ? 3600
                              : when.back() == 'm' ? 60
                                                   : 1;
    return now - static_cast<std::time_t>(n * unit);
  }
  if (when.size() == 10) return ParseUtcTimestamp(std::string(when) + "T00:00:00");
  return ParseUtcTimestamp(when);
}

}  // namespace skyslurm::cloud
