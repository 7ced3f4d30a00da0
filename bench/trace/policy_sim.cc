// SimulatePolicy (policy_sim.h): one event loop for every policy; they
// differ in where a job goes and whether it goes elsewhere later.
#include "bench/trace/policy_sim.h"

#include <algorithm>

namespace skyslurm::trace {

std::string_view PolicyName(Policy policy) {
  switch (policy) {
    case Policy::kHome:
      return "home";
    case Policy::kSlurmM:
      return "slurm-m";
    case Policy::kFailover:
      return "failover";
    case Policy::kRoundRobin:
      return "round-robin";
    case Policy::kOracle:
      return "oracle";
  }
  return "policy";
}

SimResult SimulatePolicy(Policy policy, const Load& load, const std::vector<ModelCluster>& clusters,
                         const SimOptions& options) {
  SimResult result;
  std::vector<SimCluster> sims;
  for (const ModelCluster& c : clusters) sims.emplace_back(c.name, c.nodes, c.gpus_per_node);
  const std::size_t n = load.jobs.size();
  for (const ReplayJob& j : load.jobs) result.jobs.push_back({j.id, j.submit_s});
  // Jobs are known to the clusters by their index in the load.
  auto sim_job = [&](std::size_t i) {
    const ReplayJob& j = load.jobs[i];
    const double limit = policy == Policy::kOracle ? j.runtime_s : j.time_limit_min * 60.0;
    return SimJob{std::to_string(i), j.nodes, j.gpus_per_node, limit, j.runtime_s};
  };
  auto can_run = [&](std::size_t i, std::size_t c) {
    const ReplayJob& j = load.jobs[i];
    return (j.gpu_type.empty() || j.gpu_type == clusters[c].gpu_type) && sims[c].Fits(sim_job(i));
  };
  std::vector<std::size_t> where(n, clusters.size());
  std::map<std::size_t, double> pending_since;  // the failover's clock, per job
  std::vector<SimCluster::Event> events;
  auto apply = [&](std::size_t c) {
    for (const auto& e : events) {
      const std::size_t i = std::stoul(e.id);
      if (e.kind == SimCluster::Event::Kind::kStart) {
        result.jobs[i].start = e.t;
        result.jobs[i].cluster = clusters[c].name;
        pending_since.erase(i);
      } else {
        result.jobs[i].end = e.t;
      }
      result.end = std::max(result.end, e.t);
    }
    events.clear();
  };
  auto submit = [&](std::size_t i, std::size_t c, double t) {
    where[i] = c;
    result.jobs[i].cluster = clusters[c].name;
    sims[c].Submit(sim_job(i), t, &events);
    apply(c);
    if (policy == Policy::kFailover && result.jobs[i].start == kNever) pending_since[i] = t;
  };
  std::size_t turn = 0;  // round-robin's next cluster
  auto place = [&](std::size_t i, double t) {
    std::vector<std::size_t> able;
    for (std::size_t c = 0; c < clusters.size(); ++c) {
      if (can_run(i, c)) able.push_back(c);
    }
    if (able.empty()) {
      ++result.unplaced;
      return;
    }
    std::size_t chosen = able.front();  // home, failover: the first in order
    if (policy == Policy::kRoundRobin) {
      for (std::size_t k = 0; k < clusters.size(); ++k) {
        const std::size_t c = (turn + k) % clusters.size();
        if (can_run(i, c)) {
          chosen = c;
          break;
        }
      }
      turn = chosen + 1;
    } else if (policy == Policy::kSlurmM || policy == Policy::kOracle) {
      double best = kNever;
      for (const std::size_t c : able) {
        const double start = sims[c].EstimateStart(sim_job(i), t).value_or(kNever);
        if (start < best) {
          best = start;
          chosen = c;
        }
      }
    }
    submit(i, chosen, t);
  };

  std::size_t next = 0;
  while (true) {
    double t = next < n ? load.jobs[next].submit_s : kNever;
    for (const SimCluster& s : sims) t = std::min(t, s.NextEnd());
    for (const auto& [i, since] : pending_since) {
      t = std::min(t, since + options.failover_timeout_s);
    }
    if (t == kNever || t > options.horizon_s) break;
    for (std::size_t c = 0; c < sims.size(); ++c) {
      sims[c].AdvanceTo(t, &events);
      apply(c);
    }
    while (next < n && load.jobs[next].submit_s <= t) place(next++, t);
    // The failover: pending past the timeout, to the next cluster in order.
    std::vector<std::size_t> due;
    for (const auto& [i, since] : pending_since) {
      if (since + options.failover_timeout_s <= t) due.push_back(i);
    }
    for (const std::size_t i : due) {
      const std::size_t from = where[i];
      std::size_t to = from;
      for (std::size_t k = 1; k <= clusters.size(); ++k) {
        const std::size_t c = (from + k) % clusters.size();
        if (can_run(i, c)) {
          to = c;
          break;
        }
      }
      if (to == from) {  // nowhere else: it stays
        pending_since.erase(i);
        continue;
      }
      if (!sims[from].CancelPending(std::to_string(i), t, &events)) continue;
      apply(from);
      ++result.jobs[i].moves;
      ++result.moves;
      submit(i, to, t);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const JobOutcome& o = result.jobs[i];
    if (o.start == kNever || o.start >= options.horizon_s) continue;
    const double until = std::min(o.end, options.horizon_s);
    result.busy_gpu_s[o.cluster] += (until - o.start) * load.jobs[i].gpus();
  }
  return result;
}

}  // namespace skyslurm::trace
