// A job's cost so far (JobManager::CostOf): its copies' shares of what the
// elastic clusters they went to billed since the job was created.
#include <algorithm>

#include "broker/daemon/jobs/job_manager.h"
#include "broker/daemon/jobs/lifecycle.h"
#include "broker/place/spending.h"

namespace skyslurm::daemon {

JobManager::JobCost JobManager::CostOf(const store::SkyJob& job) {
  JobCost cost;
  place::Workspace& ws = l_->ctx.ws;
  cost.currency = ws.policy.currency;
  std::vector<store::Copy> billed;
  for (const store::Copy& c : CopiesOf(job.sky_id)) {
    const place::ClusterHandle* h = ws.Find(c.cluster);
    if (h != nullptr && place::IsBilled(*h)) billed.push_back(c);
  }
  if (billed.empty()) return cost;
  cost.billed = true;
  const place::Spending spending =
      place::SpendingSince(ws, job.created, std::max(Now(), job.created),
                                                      l_->ctx.options.probe_timeout);
  for (const store::Copy& c : billed) {
    double amount = 0;
    for (const place::ClusterBill& b : spending.clusters) {
      if (b.cluster != c.cluster) continue;
      if (!b.error.empty() && cost.error.empty()) cost.error = c.cluster + ": " + b.error;
      auto it = b.bill.by_job.find(c.native_id);
      if (it != b.bill.by_job.end()) amount = it->second;
    }
    cost.amount += amount;
    cost.copies.emplace_back(c, amount);
  }
  return cost;
}

}  // namespace skyslurm::daemon
