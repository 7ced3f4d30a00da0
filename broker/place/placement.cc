#include "broker/place/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace skyslurm::place {

std::string_view KindName(Verdict::Kind kind) {
  switch (kind) {
    case Verdict::Kind::kChosen: return "chosen";
    case Verdict::Kind::kTied: return "tied";
    case Verdict::Kind::kLater: return "later";
    case Verdict::Kind::kInfeasible: return "cannot run it";
    case Verdict::Kind::kUnreachable: return "unreachable";
    case Verdict::Kind::kExcluded: return "excluded";
    case Verdict::Kind::kNoEstimate: return "no estimate";
    case Verdict::Kind::kHeldBack:
      return "held back";
    case Verdict::Kind::kOverBudget:
      return "over budget";
  }
  return "";
}

std::string FormatWait(std::time_t start, std::time_t now) {
  const long long s = static_cast<long long>(start) - static_cast<long long>(now);
  if (s <= 0) return "now";
  if (s < 90) return fmt::format("in {} s", s);
  if (s < 5400) return fmt::format("in {} min", (s + 30) / 60);
  const long long m = (s + 30) / 60;
  if (m < 48 * 60) return fmt::format("in {} h {} min", m / 60, m % 60);
  return fmt::format("in {} d {} h", m / 1440, (m % 1440) / 60);
}

std::string FormatCost(double amount, std::string_view currency) {
  return fmt::format("{}{:.2f}", currency, amount);
}

namespace {

// "15 min", "45 s": a length of time as FormatWait says it.
std::string Duration(std::chrono::seconds d) {
  if (d.count() <= 0) return "0 s";
  return FormatWait(static_cast<std::time_t>(d.count()), 0).substr(3);
}

// What GPU-seconds of waiting are worth at overflow.worth.
double GpuWaitWorth(double gpu_seconds, const Policy& policy) {
  return gpu_seconds / 3600 * *policy.wait_worth;
}

// What `seconds` of the job's wait are worth at overflow.worth (per GPU).
double WaitWorth(double seconds, const Candidate& c, const Policy& policy) {
  return GpuWaitWorth(seconds * static_cast<double>(std::max<std::int64_t>(c.gpus, 1)), policy);
}

// What overflow.worth weighs against the wait: what the job adds to the
// bill there (beside jobs that keep the node up anyway, it may add
// nothing), else its cost.
double WeighedCost(const Candidate& c) { return c.added_cost ? *c.added_cost : c.cost.value_or(0); }

// Each elastic candidate's worth to the job at overflow.worth: the wait it
// spares (from now) less what it adds to the bill.
double NetWorth(const Candidate& c, const Policy& policy, std::time_t now) {
  const double wait_s = std::max(0.0, static_cast<double>(*c.start) - static_cast<double>(now));
  return -WaitWorth(wait_s, c, policy) - WeighedCost(c);
}

void HoldBackDearerSoonerElastic(const std::vector<Candidate>& candidates, const Policy& policy,
                                 std::time_t now, std::vector<std::size_t>& runnable, Decision& d) {
  // Among the elastic candidates the one worth most: the earliest start
  // would otherwise buy an on-demand node to start seconds before a spot
  // one, at several times the price.
  const Candidate* best = nullptr;
  for (std::size_t i : runnable) {
    const Candidate& c = candidates[i];
    if (c.elastic && (best == nullptr || NetWorth(c, policy, now) > NetWorth(*best, policy, now))) {
      best = &c;
    }
  }
  if (best == nullptr) return;
  std::vector<std::size_t> kept;
  for (std::size_t i : runnable) {
    const Candidate& c = candidates[i];
    // One that starts later loses as it would anyway; one sooner but worth
    // less is held back with the figures.
    if (!c.elastic || &c == best || *c.start >= *best->start ||
        NetWorth(c, policy, now) > NetWorth(*best, policy, now) - 0.005) {
      kept.push_back(i);
      continue;
    }
    const double sooner_s = static_cast<double>(*best->start) - static_cast<double>(*c.start);
    const double sooner_worth = WaitWorth(sooner_s, c, policy);
    d.verdicts[i].kind = Verdict::Kind::kHeldBack;
    d.verdicts[i].reason = fmt::format(
        "starts it {} sooner than {}/{} for {} more: that is worth {} at overflow.worth ({} a "
        "GPU-hour of waiting)",
        Duration(std::chrono::seconds(std::lround(sooner_s))), best->cluster, best->partition,
        FormatCost(WeighedCost(c) - WeighedCost(*best), policy.currency),
        FormatCost(sooner_worth, policy.currency), FormatCost(*policy.wait_worth, policy.currency));
  }
  runnable = kept;
}

void HoldBackWhatIsNotWorthItsCost(const std::vector<Candidate>& candidates, const Policy& policy,
                                   const Candidate& fixed, std::vector<std::size_t>& runnable,
                                   Decision& d) {
  std::vector<std::size_t> kept;
  for (std::size_t i : runnable) {
    const Candidate& c = candidates[i];
    if (!c.elastic || !c.cost) {
      kept.push_back(i);
      continue;
    }
    const double saved_s =
        std::max(0.0, static_cast<double>(*fixed.start) - static_cast<double>(*c.start));
    // Where the job pends now, it also holds back the jobs queued behind it
    // there: taken away, it spares them that wait too.
    const double behind_gpu_s =
        static_cast<double>(fixed.gpus_queued_behind) * fixed.holds_those_behind_s;
    const double worth = WaitWorth(saved_s, c, policy) + GpuWaitWorth(behind_gpu_s, policy);
    if (WeighedCost(c) > worth + 0.005) {
      const std::string behind =
          behind_gpu_s > 0
              ? fmt::format(", and {} sooner for the jobs queued behind it there wanting {} GPU(s)",
                            Duration(std::chrono::seconds(std::lround(fixed.holds_those_behind_s))),
                            fixed.gpus_queued_behind)
              : "";
      d.verdicts[i].kind = Verdict::Kind::kHeldBack;
      d.verdicts[i].reason = fmt::format(
          "the wait it saves ({} sooner than {}{}) is worth {} at overflow.worth ({} a GPU-hour "
          "of waiting), less than {} {}",
          Duration(std::chrono::seconds(std::lround(saved_s))), fixed.cluster, behind,
          FormatCost(worth, policy.currency), FormatCost(*policy.wait_worth, policy.currency),
          c.added_cost ? "what it adds to the bill" : "its cost",
          FormatCost(WeighedCost(c), policy.currency));
    } else {
      kept.push_back(i);
    }
  }
  runnable = kept;
}

// The site's policy for elastic clusters: candidates it rules out get their
// verdict here and leave `runnable`.
void ApplyElasticPolicy(const std::vector<Candidate>& candidates, const Policy& policy,
                        std::time_t now, std::vector<std::size_t>& runnable, Decision& d) {
  std::vector<std::size_t> kept;
  for (std::size_t i : runnable) {
    const Candidate& c = candidates[i];
    Verdict& v = d.verdicts[i];
    if (!c.elastic) {
      kept.push_back(i);
      continue;
    }
    const Budget* over = nullptr;
    for (const Budget& b : policy.budgets) {
      if (c.cost && *c.cost > b.limit - b.spent + 0.005) {
        over = &b;
        break;
      }
    }
    if (over != nullptr) {
      v.kind = Verdict::Kind::kOverBudget;
      v.reason = fmt::format("would cost {} for its time limit: over {} ({}, {} spent)",
                             FormatCost(*c.cost, policy.currency), over->name,
                             FormatCost(over->limit, policy.currency),
                             FormatCost(over->spent, policy.currency));
    } else if (policy.spot == SpotUse::kRequire && !c.spot) {
      v.kind = Verdict::Kind::kExcluded;
      v.reason = "spot: require (an on-demand partition of an elastic cluster is not used)";
    } else {
      kept.push_back(i);
    }
  }
  runnable = kept;
  kept.clear();
  if (policy.spot == SpotUse::kAvoid) {
    const bool other = std::any_of(runnable.begin(), runnable.end(),
                                   [&](std::size_t i) { return !candidates[i].spot; });
    for (std::size_t i : runnable) {
      if (other && candidates[i].spot) {
        d.verdicts[i].kind = Verdict::Kind::kHeldBack;
        d.verdicts[i].reason = "spot: avoid (used only when no other partition can run the job)";
      } else {
        kept.push_back(i);
      }
    }
    runnable = kept;
    kept.clear();
  }
  // The earliest start of a cluster that costs nothing to start.
  const Candidate* fixed = nullptr;
  for (std::size_t i : runnable) {
    const Candidate& c = candidates[i];
    if (!c.elastic && (fixed == nullptr || *c.start < *fixed->start)) fixed = &c;
  }
  const bool hold = fixed != nullptr && *fixed->start <= now + policy.overflow_after.count();
  for (std::size_t i : runnable) {
    if (hold && candidates[i].elastic) {
      d.verdicts[i].kind = Verdict::Kind::kHeldBack;
      d.verdicts[i].reason = fmt::format(
          "an elastic cluster is used only when no other starts the job within "
          "overflow.after ({}); {} starts it {}",
          Duration(policy.overflow_after), fixed->cluster, FormatWait(*fixed->start, now));
    } else {
      kept.push_back(i);
    }
  }
  runnable = kept;
  kept.clear();
  if (!policy.wait_worth) return;
  // What the wait it saves is worth against what it costs.
  if (fixed != nullptr) HoldBackWhatIsNotWorthItsCost(candidates, policy, *fixed, runnable, d);
  HoldBackDearerSoonerElastic(candidates, policy, now, runnable, d);
}

}  // namespace

Decision Place(const std::vector<Candidate>& candidates, const Policy& policy, std::time_t now) {
  Decision d;
  d.currency = policy.currency;
  d.verdicts.resize(candidates.size());
  std::vector<std::size_t> runnable;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    Verdict& v = d.verdicts[i];
    v.cluster = c.cluster;
    v.partition = c.partition;
    v.start = c.start;
    v.cost = c.cost;
    if (!c.excluded.empty()) {
      v.kind = Verdict::Kind::kExcluded;
      v.reason = c.excluded;
    } else if (!c.unreachable.empty()) {
      v.kind = Verdict::Kind::kUnreachable;
      v.reason = c.unreachable;
    } else if (!c.infeasible.empty()) {
      v.kind = Verdict::Kind::kInfeasible;
      for (const auto& r : c.infeasible) v.reason += (v.reason.empty() ? "" : "; ") + r;
    } else if (!c.start) {
      v.kind = Verdict::Kind::kNoEstimate;
      v.reason = c.no_estimate.empty() ? "no start estimate" : c.no_estimate;
    } else {
      runnable.push_back(i);
    }
  }
  ApplyElasticPolicy(candidates, policy, now, runnable, d);
  if (runnable.empty()) {
    d.summary = "no cluster can run the job";
    for (const Verdict& v : d.verdicts) {
      if (v.kind != Verdict::Kind::kOverBudget) continue;
      // Refused for its cost: the figures say by how much.
      d.summary = fmt::format("no cluster can run the job within its budget: {}{} {}", v.cluster,
                              v.partition.empty() ? "" : "/" + v.partition, v.reason);
      break;
    }
    return d;
  }
  std::time_t earliest = *candidates[runnable.front()].start;
  for (std::size_t i : runnable) earliest = std::min(earliest, *candidates[i].start);
  const std::time_t tie_limit = earliest + policy.tie_tolerance.count();
  std::vector<std::size_t> tied;
  for (std::size_t i : runnable) {
    if (*candidates[i].start <= tie_limit) tied.push_back(i);
  }
  auto better = [&](std::size_t a, std::size_t b) {
    const Candidate& x = candidates[a];
    const Candidate& y = candidates[b];
    if (x.preference != y.preference) return x.preference > y.preference;
    if (x.home != y.home) return x.home;
    // What costs nothing first: an elastic cluster bills, Kubernetes does not.
    if (x.elastic != y.elastic) return !x.elastic;
    if (x.overflow != y.overflow) return !x.overflow;
    // What the bill grows by: beside jobs that keep a node up anyway, nothing.
    if (WeighedCost(x) != WeighedCost(y)) return WeighedCost(x) < WeighedCost(y);
    if (x.partition_rank != y.partition_rank) return x.partition_rank < y.partition_rank;
    if (*x.start != *y.start) return *x.start < *y.start;
    return std::tie(x.cluster, x.partition) < std::tie(y.cluster, y.partition);
  };
  const std::size_t winner = *std::min_element(tied.begin(), tied.end(), better);
  d.chosen = winner;
  const Candidate& w = candidates[winner];
  std::string why;
  if (tied.size() == 1) {
    why = fmt::format("the earliest start ({})", FormatWait(*w.start, now));
  } else {
    bool pref_decided = false;
    for (std::size_t i : tied) {
      if (i != winner && candidates[i].preference != w.preference) pref_decided = true;
    }
    why = fmt::format("{} candidates start within {} s of each other ({}); ", tied.size(),
                      policy.tie_tolerance.count(), FormatWait(*w.start, now));
    bool home_decided = false, kind_decided = false, elastic_decided = false, cost_decided = false;
    for (std::size_t i : tied) {
      if (i == winner) continue;
      const Candidate& c = candidates[i];
      if (c.preference != w.preference) continue;
      if (c.home != w.home) {
        home_decided = true;
      } else if (c.elastic != w.elastic) {
        elastic_decided = true;
      } else if (c.overflow != w.overflow) {
        kind_decided = true;
      } else if (WeighedCost(c) != WeighedCost(w)) {
        cost_decided = true;
      }
    }
    if (pref_decided) {
      why += fmt::format("preference {} wins", w.preference);
    } else if (home_decided) {
      why += "the home cluster wins the tie";
    } else if (elastic_decided) {
      why += "a cluster that costs nothing to start wins the tie over an elastic one";
    } else if (kind_decided) {
      why += "a Slurm cluster wins the tie over Kubernetes";
    } else if (cost_decided) {
      why += w.added_cost ? fmt::format("the cheaper wins (it adds {} to the bill)",
                                        FormatCost(*w.added_cost, policy.currency))
                          : fmt::format("the cheaper wins ({})",
                                        FormatCost(w.cost.value_or(0), policy.currency));
    } else if (w.partition_rank == 0) {
      why += fmt::format("{}'s first choice of partition wins", w.cluster);
    } else {
      why += "the earlier start wins";
    }
  }
  for (std::size_t i : runnable) {
    Verdict& v = d.verdicts[i];
    if (i == winner) {
      v.kind = Verdict::Kind::kChosen;
      v.reason = why;
    } else if (std::find(tied.begin(), tied.end(), i) != tied.end()) {
      v.kind = Verdict::Kind::kTied;
      v.reason = fmt::format("starts {} too, but lost the tie", FormatWait(*candidates[i].start, now));
    } else {
      v.kind = Verdict::Kind::kLater;
      v.reason = fmt::format("starts {}, {} after {}", FormatWait(*candidates[i].start, now),
                             FormatWait(*candidates[i].start, *w.start).substr(3), w.cluster);
    }
  }
  d.summary = fmt::format("{}{}: {}", w.cluster, w.partition.empty() ? "" : "/" + w.partition, why);
  return d;
}

}  // namespace skyslurm::place
