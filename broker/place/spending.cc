#include "broker/place/spending.h"

#include <fmt/format.h>

#include <future>
#include <mutex>

#include "broker/place/elastic.h"

namespace skyslurm::place {
namespace {

// What a cluster's bills are made from: its ledger, its accounting and its
// nodes' GPUs, read once for every period from `since` on.
struct BillFacts {
  std::string cluster, login;
  std::vector<cloud::PowerUp> ledger;
  std::vector<cloud::NodeUse> uses;
  std::map<std::string, int> gpus;  // node -> its GPUs
  config::ClusterSettings settings;
  std::string error;

  ClusterBill BillFrom(std::time_t since, std::time_t now) const {
    ClusterBill out{cluster, login, {}, error};
    if (!error.empty()) return out;
    out.bill = cloud::BillOf(
        ledger, uses,
        [&](const cloud::PowerUp& up) {
          auto g = gpus.find(up.node);
          return cloud::NodePrice{g == gpus.end() ? 0 : g->second,
                                  settings.PriceIn(up.partition).value_or(0)};
        },
        since, now);
    return out;
  }
};

BillFacts ReadFacts(ClusterHandle& h, std::time_t since, std::chrono::milliseconds timeout,
                    bool with_accounting) {
  BillFacts f;
  f.cluster = h.name;
  f.login = h.login;
  f.settings = h.settings;
  if (h.settings.ledger.empty()) {
    f.error = "no ledger (clusters." + h.name + ".ledger): its bill cannot be counted";
    return f;
  }
  auto ledger = ReadLedger(h.settings.ledger);
  if (!ledger.ok()) {
    f.error = ledger.status().message();
    return f;
  }
  f.ledger = std::move(*ledger);
  // Node time billed since then: only then are accounting and nodes read.
  bool billed_since = false;
  for (const cloud::PowerUp& up : f.ledger) billed_since |= up.down == 0 || up.down > since;
  if (!billed_since && !with_accounting) return f;
  if (h.backend == nullptr) {
    f.error = h.name + " cannot be reached (" + h.unavailable + ")";
    return f;
  }
  auto uses = h.backend->NodeUses(since, timeout);
  if (!uses.ok()) {
    f.error = "its accounting: " + uses.status().message();
    return f;
  }
  f.uses = std::move(*uses);
  auto inventory = h.backend->Probe(timeout);
  if (!inventory.ok()) {
    f.error = inventory.status().message();
    return f;
  }
  for (const cluster::Node& n : inventory->description.nodes) {
    int here = 0;
    for (const auto& g : n.gres) {
      if (g.name == "gpu") here += static_cast<int>(g.count);
    }
    f.gpus[n.name] = here;
  }
  return f;
}

// Every billed cluster's facts, read side by side: one slow login node
// costs its own time, not the sum.
std::vector<BillFacts> ReadAllFacts(Workspace& ws, std::time_t since,
                                    std::chrono::milliseconds timeout, bool with_accounting) {
  std::vector<std::future<BillFacts>> reads;
  for (ClusterHandle& h : ws.handles) {
    if (!IsBilled(h)) continue;
    reads.push_back(std::async(std::launch::async, [&h, since, timeout, with_accounting] {
      return ReadFacts(h, since, timeout, with_accounting);
    }));
  }
  std::vector<BillFacts> facts;
  for (auto& r : reads) facts.push_back(r.get());
  return facts;
}

Spending SpendingOf(const std::vector<BillFacts>& facts, std::time_t since, std::time_t now) {
  Spending s;
  s.since = since;
  s.now = now;
  for (const BillFacts& f : facts) s.clusters.push_back(f.BillFrom(since, now));
  return s;
}

}  // namespace

bool IsBilled(const ClusterHandle& h) {
  const config::ClusterSettings& s = h.settings;
  return h.caps.billing && s.SaysElastic() && (s.cost_default || !s.cost.empty());
}

double ClusterBill::mine() const {
  auto it = bill.by_user.find(login);
  return it == bill.by_user.end() ? 0 : it->second;
}

double Spending::total() const {
  double sum = 0;
  for (const auto& c : clusters) sum += c.bill.amount;
  return sum;
}

double Spending::mine() const {
  double sum = 0;
  for (const auto& c : clusters) sum += c.mine();
  return sum;
}

Spending SpendingSince(Workspace& ws, std::time_t since, std::time_t now,
                       std::chrono::milliseconds timeout, bool with_accounting) {
  return SpendingOf(ReadAllFacts(ws, since, timeout, with_accounting), since, now);
}

std::vector<Budget> CurrentBudgets(Workspace& ws, std::time_t now,
                                   std::chrono::milliseconds timeout) {
  const config::ElasticPolicy& policy = ws.config.settings.elastic;
  std::vector<Budget> budgets;
  if (!policy.user_budget.any() && !policy.site_budget.any()) return budgets;
  // The month's bill holds the day's: the clusters are read once.
  const std::time_t month = cloud::StartOfUtcMonth(now);
  const std::time_t day = cloud::StartOfUtcDay(now);
  const std::vector<BillFacts> facts = ReadAllFacts(ws, std::min(month, day), timeout, false);
  const Spending spent = SpendingOf(facts, month, now);
  const Spending today = SpendingOf(facts, day, now);
  std::string unreadable;
  for (const BillFacts& f : facts) {
    if (!f.error.empty() && unreadable.empty()) unreadable = f.cluster + "'s bill: " + f.error;
  }
  auto add = [&](const std::optional<double>& limit, const std::string& name, double amount) {
    if (!limit) return;
    Budget b{name, *limit, amount};
    if (!unreadable.empty()) {
      // Money is not spent on a guess: an unknown bill leaves nothing.
      b.spent = *limit;
      b.name += " (spend unknown: " + unreadable + ")";
    }
    budgets.push_back(std::move(b));
  };
  add(policy.user_budget.day, "your daily budget", today.mine());
  add(policy.user_budget.month, "your monthly budget", spent.mine());
  add(policy.site_budget.day, "the site's daily budget", today.total());
  add(policy.site_budget.month, "the site's monthly budget", spent.total());
  return budgets;
}

struct BudgetCache {
  std::mutex mu;
  std::time_t read = 0;
  std::vector<Budget> budgets;
};

void CacheBudgets(Workspace& ws, std::chrono::seconds ttl) {
  ws.budget_ttl = ttl;
  ws.budget_cache = ttl.count() > 0 ? std::make_shared<BudgetCache>() : nullptr;
}

Policy PlacementPolicy(Workspace& ws, std::chrono::milliseconds timeout) {
  Policy policy = ws.policy;
  const std::time_t now = std::time(nullptr);
  if (ws.budget_cache == nullptr) {
    policy.budgets = CurrentBudgets(ws, now, timeout);
    return policy;
  }
  BudgetCache& cache = *ws.budget_cache;
  std::lock_guard lock(cache.mu);  // one reader; the others take its answer
  if (cache.read == 0 || now - cache.read >= ws.budget_ttl.count()) {
    cache.budgets = CurrentBudgets(ws, now, timeout);
    cache.read = now;
  }
  policy.budgets = cache.budgets;
  return policy;
}

}  // namespace skyslurm::place
