// What the elastic clusters billed, and the budgets a placement is held to:
// each cluster's ledger (what the provider billed, node by node) priced by
// the site and attributed to jobs and users by the cluster's accounting
// (sacct). Reads the clusters; the arithmetic is cloud/bill.h's.
#pragma once

#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include "broker/cloud/bill.h"
#include "broker/place/workspace.h"

namespace skyslurm::place {

// Whether a provider bills the cluster for its nodes' time: an elastic
// Slurm cluster (boot_time or ledger set) with a price.
bool IsBilled(const ClusterHandle& h);

struct ClusterBill {
  std::string cluster;
  std::string login;  // the user's login name there, whose share `mine` is
  cloud::Bill bill;
  // Why the bill could not be read (no ledger, the ledger or accounting
  // unreadable): then `bill` is empty and the cluster's spend unknown.
  std::string error;
  double mine() const;
};

struct Spending {
  std::time_t since = 0;
  std::time_t now = 0;
  std::vector<ClusterBill> clusters;  // every cluster priced and elastic, in workspace order
  double total() const;               // all users'
  double mine() const;                // the user's
};

// The bills of every elastic cluster with a price (and `ledger`) from
// `since` to `now`. A cluster's accounting is read only where it is needed:
// always for `with_accounting`, else only when its ledger has node time
// since then (with none, its bill is 0 without asking).
Spending SpendingSince(Workspace& ws, std::time_t since, std::time_t now,
                       std::chrono::milliseconds timeout, bool with_accounting = true);

// The budgets of the settings (budget: user/site, day/month), with what has
// been spent of each so far, for placement to hold jobs to. None when the
// settings set none (nothing is read). A bill that cannot be read for a
// user's budget refuses: its spend counts as the whole budget, and the
// budget's name says why.
std::vector<Budget> CurrentBudgets(Workspace& ws, std::time_t now,
                                   std::chrono::milliseconds timeout);

// The workspace's policy with CurrentBudgets: what a placement is held to.
// Thread-safe once CacheBudgets was called (the bills then read at most
// once per ttl, one thread reading while the others wait for its answer).
Policy PlacementPolicy(Workspace& ws, std::chrono::milliseconds timeout);

// Makes PlacementPolicy reuse the budgets' spend for `ttl` (0: read each time).
void CacheBudgets(Workspace& ws, std::chrono::seconds ttl);

}  // namespace skyslurm::place
