#include "broker/cloud/bill.h"

#include <algorithm>

#include "broker/cloud/cost.h"

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

}  // namespace skyslurm::cloud
