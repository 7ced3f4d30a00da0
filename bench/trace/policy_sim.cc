// SimulatePolicy (policy_sim.h): one event loop for every policy; they
// differ in where a job goes and whether it goes elsewhere later.
#include "bench/trace/policy_sim.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>

#include "broker/daemon/jobs/failover_policy.h"
#include "broker/place/placement.h"

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
    case Policy::kSkyslurm:
      return "skyslurm";
    case Policy::kOracle:
      return "oracle";
    case Policy::kFederation:
      return "federation";
  }
  return "policy";
}

std::optional<Policy> PolicyNamed(std::string_view name) {
  for (const Policy p : {Policy::kHome, Policy::kSlurmM, Policy::kFailover, Policy::kRoundRobin,
                         Policy::kSkyslurm, Policy::kOracle, Policy::kFederation}) {
    if (PolicyName(p) == name) return p;
  }
  return std::nullopt;
}

SimOptions ScaledOptions(double time_factor, const config::FailoverSettings& daemon) {
  SimOptions o;
  o.daemon = daemon;
  auto scaled = [&](int seconds) {
    return std::max(1, static_cast<int>(std::lround(seconds / time_factor)));
  };
  o.failover_timeout_s /= time_factor;
  o.plan_window_s /= time_factor;
  o.daemon.poll_interval = scaled(o.daemon.poll_interval);
  o.daemon.migrate_after = scaled(o.daemon.migrate_after);
  o.daemon.migrate_gain = scaled(o.daemon.migrate_gain);
  o.daemon.cluster_dead_after = scaled(o.daemon.cluster_dead_after);
  o.daemon.moves_per_cluster =
      static_cast<int>(std::lround(o.daemon.moves_per_cluster * time_factor));
  o.tie_tolerance_s = scaled(o.tie_tolerance_s);
  return o;
}

SimResult SimulatePolicy(Policy policy, const Load& load, const std::vector<ModelCluster>& clusters,
                         const SimOptions& options) {
  SimResult result;
  std::vector<SimCluster> sims;
  for (const ModelCluster& c : clusters) {
    sims.emplace_back(c.name, c.nodes, c.gpus_per_node, options.plan_depth, options.plan_window_s);
  }
  const std::size_t n = load.jobs.size();
  for (const ReplayJob& j : load.jobs) result.jobs.push_back({j.id, j.submit_s});
  // Jobs are known to the clusters by their index in the load.
  auto sim_job = [&](std::size_t i) {
    const ReplayJob& j = load.jobs[i];
    const double limit = policy == Policy::kOracle ? j.runtime_s : j.time_limit_min * 60.0;
    return SimJob{std::to_string(i), j.nodes, j.gpus_per_node, limit, j.runtime_s};
  };
  std::vector<std::size_t> where(n, clusters.size());
  std::map<std::size_t, double> pending_since;  // the failover's clock, per job
  // skyslurm's: each pending job's copy (when submitted), in the order
  // skyslurmd looks at them; when each was last weighed; the moves each
  // cluster took.
  std::map<std::size_t, double> copies;
  std::map<std::size_t, std::time_t> last_weighed;
  std::map<std::string, std::vector<std::time_t>> moves_into;
  place::Policy placement;
  placement.tie_tolerance = std::chrono::seconds(options.tie_tolerance_s);
  // skyslurmd's clock is whole seconds.
  auto whole = [](double t) { return static_cast<std::time_t>(std::floor(t)); };
  auto estimate = [](std::optional<double> at) -> std::optional<std::time_t> {
    if (!at || *at == kNever) return std::nullopt;
    return static_cast<std::time_t>(std::ceil(*at));
  };
  // The candidates skyslurmd weighs for job i at t: every cluster, its
  // estimate by limits; where the job pends (`own`), its planned start.
  auto candidates = [&](std::size_t i, double t, std::size_t own) {
    std::vector<place::Candidate> out;
    for (std::size_t c = 0; c < clusters.size(); ++c) {
      place::Candidate k;
      k.cluster = clusters[c].name;
      k.partition = "gpu";
      k.home = c == 0;
      k.gpus = load.jobs[i].gpus();
      if (!CanRun(load.jobs[i], clusters[c])) {
        k.infeasible.push_back("no " + load.jobs[i].gpu_type + " GPUs of that shape");
      } else {
        k.start = estimate(c == own ? sims[c].PlannedStart(std::to_string(i))
                                    : sims[c].EstimateStart(sim_job(i), t));
        if (!k.start) k.no_estimate = "not planned (beyond the backfill depth)";
      }
      out.push_back(std::move(k));
    }
    return out;
  };
  auto timed = [&](auto&& decide) {
    const auto started = std::chrono::steady_clock::now();
    auto decided = decide();
    result.decision_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ++result.decisions;
    return decided;
  };
  std::vector<SimCluster::Event> events;
  // The federation's: the clusters where each job's other copies pend.
  std::map<std::size_t, std::vector<std::size_t>> siblings;
  // Recursive: a sibling cancelled may let other jobs start there.
  std::function<void(std::size_t)> apply = [&](std::size_t c) {
    std::vector<SimCluster::Event> mine;
    mine.swap(events);
    struct Revoke {
      std::size_t job, cluster;
      double t;
    };
    std::vector<Revoke> revoke;
    for (const auto& e : mine) {
      const std::size_t i = std::stoul(e.id);
      if (e.kind == SimCluster::Event::Kind::kStart) {
        result.jobs[i].start = e.t;
        result.jobs[i].cluster = clusters[c].name;
        pending_since.erase(i);
        copies.erase(i);
        last_weighed.erase(i);
        if (auto it = siblings.find(i); it != siblings.end()) {
          for (const std::size_t other : it->second) {
            if (other != c) revoke.push_back({i, other, e.t});
          }
          siblings.erase(it);
        }
      } else {
        result.jobs[i].end = e.t;
      }
      result.end = std::max(result.end, e.t);
    }
    for (const Revoke& r : revoke) {
      if (sims[r.cluster].CancelPending(std::to_string(r.job), r.t, &events)) apply(r.cluster);
    }
  };
  auto submit = [&](std::size_t i, std::size_t c, double t) {
    where[i] = c;
    result.jobs[i].cluster = clusters[c].name;
    sims[c].Submit(sim_job(i), t, &events);
    apply(c);
    if (result.jobs[i].start != kNever) return;
    if (policy == Policy::kFailover) pending_since[i] = t;
    if (policy == Policy::kSkyslurm) copies[i] = t;
  };
  std::size_t turn = 0;  // round-robin's next cluster
  auto place = [&](std::size_t i, double t) {
    const std::vector<std::size_t> able = AbleClusters(load.jobs[i], clusters);
    if (able.empty()) {
      ++result.unplaced;
      return;
    }
    if (policy == Policy::kFederation) {  // a sibling everywhere, until one starts
      for (const std::size_t c : able) {
        submit(i, c, t);
        if (result.jobs[i].start != kNever) break;
        siblings[i].push_back(c);
      }
      return;
    }
    std::size_t chosen = able.front();  // home, failover: the first in order
    if (policy == Policy::kRoundRobin) {
      chosen = NextAble(load.jobs[i], clusters, turn).value_or(chosen);
      turn = chosen + 1;
    } else if (policy == Policy::kSkyslurm) {
      const auto decision = timed([&] {
        const auto cs = candidates(i, t, clusters.size());
        return place::Place(cs, placement, whole(t));
      });
      if (!decision.chosen) {
        ++result.unplaced;
        return;
      }
      chosen = *decision.chosen;
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

  // skyslurmd's look at the queues: every job pending past migrate_after
  // weighed (each at most every poll_interval, 5 s at least, and
  // kMoveWeighsPerLook a look), and moved where ChooseMove says.
  const config::FailoverSettings& daemon = options.daemon;
  auto look = [&](double t) {
    const std::time_t now = whole(t);
    int weighed = 0;
    std::vector<std::pair<std::size_t, double>> pending(copies.begin(), copies.end());
    for (const auto& [i, since] : pending) {
      store::SkyJob job;
      job.state = "PENDING";
      job.reason = "Resources";
      job.cluster = clusters[where[i]].name;
      job.submitted = whole(since);
      job.moves = result.jobs[i].moves;
      daemon::Observation seen;
      seen.now = now;
      seen.cluster_answered = now;
      seen.answered_now = true;
      seen.queue_read = now;
      backend::JobInfo copy;
      copy.phase = backend::JobPhase::kPending;
      copy.state = "PENDING";
      copy.reason = "Resources";
      seen.copy = copy;
      if (daemon::Decide(job, seen, daemon).action != daemon::Action::kWeighMove) continue;
      if (auto it = last_weighed.find(i);
          it != last_weighed.end() && now - it->second < std::max(5, daemon.poll_interval)) {
        continue;
      }
      if (weighed >= daemon::kMoveWeighsPerLook) break;
      ++weighed;
      last_weighed[i] = now;
      const auto choice = timed([&] {
        const auto cs = candidates(i, t, where[i]);
        const place::Decision d = place::Place(cs, placement, now);
        return daemon::ChooseMove(cs, d, job.cluster, now, daemon.migrate_gain);
      });
      if (!choice.to) continue;
      if (daemon::MovesInLastMinute(moves_into[clusters[*choice.to].name], now) >=
          daemon.moves_per_cluster) {
        continue;
      }
      // Moved at once, as skyslurmd does: the next job weighed sees it.
      const std::size_t from = where[i];
      if (!sims[from].CancelPending(std::to_string(i), t, &events)) continue;
      apply(from);
      copies.erase(i);
      moves_into[clusters[*choice.to].name].push_back(now);
      ++result.jobs[i].moves;
      ++result.moves;
      submit(i, *choice.to, t);
    }
  };
  const double poll = daemon.poll_interval;
  double next_look = poll;

  std::size_t next = 0;
  while (true) {
    double t = next < n ? load.jobs[next].submit_s : kNever;
    for (const SimCluster& s : sims) t = std::min(t, s.NextEnd());
    for (const auto& [i, since] : pending_since) {
      t = std::min(t, since + options.failover_timeout_s);
    }
    if (!copies.empty()) t = std::min(t, next_look);
    if (t == kNever || t > options.horizon_s) break;
    for (std::size_t c = 0; c < sims.size(); ++c) {
      sims[c].AdvanceTo(t, &events);
      apply(c);
    }
    while (next < n && load.jobs[next].submit_s <= t) place(next++, t);
    if (policy == Policy::kSkyslurm && !copies.empty() && next_look <= t) look(t);
    // The looks keep their beat (every poll_interval from 0).
    next_look = (std::floor(t / poll) + 1) * poll;
    // The failover: pending past the timeout, to the next cluster in order.
    std::vector<std::size_t> due;
    for (const auto& [i, since] : pending_since) {
      if (since + options.failover_timeout_s <= t) due.push_back(i);
    }
    for (const std::size_t i : due) {
      const std::size_t from = where[i];
      const std::size_t to = NextAble(load.jobs[i], clusters, from + 1).value_or(from);
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
