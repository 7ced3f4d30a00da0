// ReplayOnTestbed (testbed_replay.h): one loop submits what is due, reads
// every cluster's queue and, for the failover, moves what pended too long.
// Times are the clusters' own (squeue's start and end, whole seconds)
// against the moment each sbatch was run.
#include "bench/trace/testbed_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <future>
#include <sstream>
#include <thread>

#include "broker/util/command.h"
#include "broker/util/strings.h"

namespace skyslurm::trace {
namespace {

double EpochNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// "2026-12-06T07:12:54" (squeue's local time) as epoch seconds; nullopt
// for N/A, Unknown and the like.
std::optional<double> SlurmTime(const std::string& text) {
  std::tm tm{};
  const char* end = ::strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  tm.tm_isdst = -1;
  return static_cast<double>(std::mktime(&tm));
}

bool Started(const std::string& state) {
  return state != "PENDING" && state != "CANCELLED" && !state.empty();
}
bool Ended(const std::string& state) {
  return Started(state) && state != "RUNNING" && state != "COMPLETING" && state != "CONFIGURING" &&
         state != "SUSPENDED";
}

class Testbed {
 public:
  explicit Testbed(const TestbedOptions& o) : o_(o) {}

  CommandOutput On(const std::string& cluster, std::vector<std::string> argv) {
    std::string upper = cluster;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    Command c;
    c.argv = std::move(argv);
    const auto conf = o_.testbed.find("SLURM_CONF_" + upper);
    c.env_set = {{"SLURM_CONF", conf == o_.testbed.end() ? "" : conf->second}};
    c.timeout = std::chrono::seconds(60);
    return Finish(runner_.Run(c));
  }

  // As the replay's user types it: skyslurm's sbatch first on PATH, its
  // HOME, skyslurmd's settings scaled.
  CommandOutput Typed(std::vector<std::string> argv) {
    const config::FailoverSettings& d = o_.scaled.daemon;
    Command c;
    c.argv = std::move(argv);
    c.env_set = {{"HOME", o_.home},
                 {"SLURM_CONF", o_.testbed.at("SLURM_CONF_ALPHA")},
                 {"PATH", o_.shim_bin + ":" + std::getenv("PATH")},
                 {"SKYSLURM_CLUSTERS_DENIED", "delta,kappa"},
                 {"SKYSLURM_POLL_INTERVAL", std::to_string(d.poll_interval)},
                 {"SKYSLURM_MIGRATE_AFTER", std::to_string(d.migrate_after)},
                 {"SKYSLURM_MIGRATE_GAIN", std::to_string(d.migrate_gain)},
                 {"SKYSLURM_MOVES_PER_CLUSTER", std::to_string(d.moves_per_cluster)},
                 {"SKYSLURM_MAX_MOVES", std::to_string(d.max_moves)},
                 {"SKYSLURM_CLUSTER_DEAD_AFTER", std::to_string(d.cluster_dead_after)}};
    c.env_unset = {"SKYSLURM_CONFIG", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"};
    c.cwd = o_.home;
    c.timeout = std::chrono::seconds(120);
    return Finish(runner_.Run(c));
  }

 private:
  static CommandOutput Finish(Result<CommandOutput> r) {
    if (r.ok()) return *r;
    CommandOutput failed;
    failed.exit_code = 127;
    failed.err = r.status().message();
    return failed;
  }
  const TestbedOptions& o_;
  LocalCommandRunner runner_;
};

// Every replay job in the clusters' queues (all states squeue still
// shows), by job index, submitted since `since`.
std::map<std::size_t, std::vector<QueuedCopy>> ReadQueues(Testbed& tb,
                                                          const std::vector<ModelCluster>& clusters,
                                                          const std::string& prefix, double since) {
  std::map<std::size_t, std::vector<QueuedCopy>> out;
  for (const ModelCluster& c : clusters) {
    const CommandOutput q = tb.On(c.name, {"squeue", "-h", "-t", "all", "-o", kReplayQueueFormat});
    for (auto& [i, copies] : ParseReplayQueue(q.out, c.name, prefix, since)) {
      for (QueuedCopy& copy : copies) out[i].push_back(std::move(copy));
    }
  }
  return out;
}

}  // namespace

std::map<std::size_t, std::vector<QueuedCopy>> ParseReplayQueue(const std::string& squeue_out,
                                                                const std::string& cluster,
                                                                const std::string& prefix,
                                                                double since) {
  std::map<std::size_t, std::vector<QueuedCopy>> out;
  std::istringstream rows(squeue_out);
  for (std::string row; std::getline(rows, row);) {
    const std::vector<std::string> f = SplitList(row, '|');
    if (f.size() != 6 || !f[1].starts_with(prefix)) continue;
    const std::string index = f[1].substr(prefix.size());
    if (index.empty() || !std::all_of(index.begin(), index.end(), ::isdigit)) continue;
    // Whole seconds: a second's grace.
    if (const auto submitted = SlurmTime(f[5]); !submitted || *submitted < since - 1) continue;
    out[std::stoul(index)].push_back({cluster, f[0], f[2], SlurmTime(f[3]), SlurmTime(f[4])});
  }
  return out;
}

Status ClearReplayJobs(const TestbedOptions& options, const std::vector<ModelCluster>& clusters,
                       double timeout_s) {
  Testbed tb(options);
  const double until = EpochNow() + timeout_s;
  while (true) {
    std::size_t live = 0;
    for (const ModelCluster& c : clusters) {
      const CommandOutput q = tb.On(c.name, {"squeue", "-h", "-o", "%i|%j|%T"});
      std::vector<std::string> ids;
      std::istringstream rows(q.out);
      for (std::string row; std::getline(rows, row);) {
        const std::vector<std::string> f = SplitList(row, '|');
        if (f.size() == 3 && f[1].starts_with(options.name_prefix)) {
          ++live;
          if (f[2] == "PENDING" || f[2] == "RUNNING") ids.push_back(f[0]);
        }
      }
      if (!ids.empty()) {
        ids.insert(ids.begin(), "scancel");
        tb.On(c.name, ids);
      }
    }
    if (live == 0) return OkStatus();
    if (EpochNow() > until) {
      return UnavailableError(
          fmt::format("{} replay jobs still in the queues after {} s", live, timeout_s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

Result<SimResult> ReplayOnTestbed(Policy policy, const Load& load,
                                  const std::vector<ModelCluster>& clusters,
                                  const TestbedOptions& options) {
  if (policy == Policy::kOracle || policy == Policy::kFederation) {
    return InvalidArgumentError(fmt::format("{} is simulated, not replayed", PolicyName(policy)));
  }
  Testbed tb(options);
  const std::string prefix = fmt::format("{}-{}-", options.name_prefix, PolicyName(policy));
  SKY_RETURN_IF_ERROR(ClearReplayJobs(options, clusters));

  const std::size_t n = load.jobs.size();
  SimResult result;
  for (const ReplayJob& j : load.jobs) result.jobs.push_back({j.id, j.submit_s});
  // The job's options after `sbatch`: natives ask for a type by feature,
  // skyslurm by GPU type.
  auto job_args = [&](std::size_t i) {
    const ReplayJob& j = load.jobs[i];
    std::vector<std::string> a = {
        "-J",       prefix + std::to_string(i), "-t",       std::to_string(j.time_limit_min),
        "-N",       std::to_string(j.nodes),    "--mem=1G", "-o",
        "/dev/null"};
    std::string type = j.gpu_type;
    for (char& ch : type) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (j.gpus_per_node > 0) {
      if (policy == Policy::kSkyslurm && !type.empty()) {
        a.push_back(fmt::format("--gpus-per-node={}:{}", type, j.gpus_per_node));
      } else {
        a.push_back(fmt::format("--gpus-per-node={}", j.gpus_per_node));
        if (!type.empty()) a.push_back("--constraint=" + type);
      }
    }
    a.insert(a.end(), {"--wrap", fmt::format("sleep {:.2f}", j.runtime_s)});
    return a;
  };
  struct Live {
    std::size_t cluster = 0;
    std::string id;
    double since = 0;  // when this copy was submitted (epoch)
  };
  std::map<std::size_t, Live> failing_over;  // the failover's jobs pending, their copy
  std::vector<double> submitted_at(n, 0);
  std::size_t turn = 0;  // round-robin's
  std::string errors;
  // The sbatch commands run side by side (a burst of arrivals is not
  // queued behind one sbatch after another, as users submit at once),
  // decided here, harvested by the loop.
  struct InFlight {
    std::size_t job;
    std::size_t cluster;  // a native sbatch's; clusters.size() for -M and skyslurm
    double since;
    std::future<CommandOutput> out;
  };
  std::vector<InFlight> in_flight;
  auto launch = [&](std::size_t i, std::size_t c, std::vector<std::string> argv, bool typed) {
    const double since = EpochNow();
    const std::string cluster = c < clusters.size() ? clusters[c].name : clusters.front().name;
    in_flight.push_back({i, c, since, std::async(std::launch::async, [&tb, argv, cluster, typed] {
                           return typed ? tb.Typed(argv) : tb.On(cluster, argv);
                         })});
  };
  auto native = [&](std::size_t i, std::size_t c) {
    std::vector<std::string> argv = {"sbatch", "--parsable"};
    const auto a = job_args(i);
    argv.insert(argv.end(), a.begin(), a.end());
    launch(i, c, argv, false);
  };
  auto submit = [&](std::size_t i) {
    const std::vector<std::size_t> able = AbleClusters(load.jobs[i], clusters);
    if (able.empty()) {
      ++result.unplaced;
      return;
    }
    submitted_at[i] = EpochNow();
    switch (policy) {
      case Policy::kHome:
      case Policy::kFailover:
        native(i, able.front());
        break;
      case Policy::kRoundRobin: {
        const std::size_t chosen = NextAble(load.jobs[i], clusters, turn).value_or(able.front());
        turn = chosen + 1;
        native(i, chosen);
        break;
      }
      case Policy::kSlurmM: {
        std::string names;
        for (const std::size_t c : able) names += (names.empty() ? "" : ",") + clusters[c].name;
        std::vector<std::string> argv = {"sbatch", "--parsable", "-M", names};
        const auto a = job_args(i);
        argv.insert(argv.end(), a.begin(), a.end());
        launch(i, clusters.size(), argv, false);
        break;
      }
      case Policy::kSkyslurm: {
        std::vector<std::string> argv = {"sbatch", "--sky-any-cluster"};
        const auto a = job_args(i);
        argv.insert(argv.end(), a.begin(), a.end());
        launch(i, clusters.size(), argv, true);
        break;
      }
      case Policy::kOracle:
      case Policy::kFederation:
        break;
    }
  };
  // What the sbatch commands that ended said: a failover copy's id is
  // watched from its submission on.
  auto harvest = [&](bool all) {
    for (auto it = in_flight.begin(); it != in_flight.end();) {
      if (!all && it->out.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
        ++it;
        continue;
      }
      const CommandOutput out = it->out.get();
      if (out.exit_code != 0) {
        errors += fmt::format("job {}: {}{}", it->job, out.err, out.out);
      } else if (policy == Policy::kFailover) {
        failing_over[it->job] = {it->cluster, Trim(out.out.substr(0, out.out.find(';'))),
                                 it->since};
      }
      it = in_flight.erase(it);
    }
  };

  const double t0 = EpochNow();
  const double stop = t0 + load.window_s + options.drain_s;
  double max_lag = 0;
  std::size_t next = 0;
  // Every copy of each job seen, as last seen: squeue forgets a job
  // MinJobAge (300 s) after its end, the replay does not.
  std::map<std::size_t, std::map<std::pair<std::string, std::string>, QueuedCopy>> seen;
  auto look = [&] {
    for (auto& [i, copies] : ReadQueues(tb, clusters, prefix, t0)) {
      for (QueuedCopy& c : copies) seen[i][{c.cluster, c.id}] = std::move(c);
    }
  };
  constexpr std::size_t kSideBySide = 16;
  double last_look = 0;
  while (errors.empty()) {
    while (next < n && t0 + load.jobs[next].submit_s <= EpochNow() &&
           in_flight.size() < kSideBySide) {
      max_lag = std::max(max_lag, EpochNow() - (t0 + load.jobs[next].submit_s));
      submit(next++);
    }
    harvest(false);
    if (EpochNow() - last_look < options.look_s) {
      // Until the next arrival or look, whichever comes first.
      double wake = last_look + options.look_s;
      if (next < n) wake = std::min(wake, t0 + load.jobs[next].submit_s);
      std::this_thread::sleep_for(
          std::chrono::duration<double>(std::max(0.005, wake - EpochNow())));
      continue;
    }
    last_look = EpochNow();
    look();
    // The failover: pending past the timeout, cancelled if still pending,
    // submitted to the next cluster in order that can run it.
    for (auto it = failing_over.begin(); it != failing_over.end();) {
      const std::size_t i = it->first;
      const Live live = it->second;
      const auto copy = seen[i].find({clusters[live.cluster].name, live.id});
      const std::string state = copy == seen[i].end() ? "" : copy->second.state;
      if (Started(state)) {
        it = failing_over.erase(it);
        continue;
      }
      if (EpochNow() - live.since < options.scaled.failover_timeout_s) {
        ++it;
        continue;
      }
      const std::size_t to =
          NextAble(load.jobs[i], clusters, live.cluster + 1).value_or(live.cluster);
      it = failing_over.erase(it);       // back when its next copy is submitted
      if (to == live.cluster) continue;  // nowhere else: it stays
      tb.On(clusters[live.cluster].name, {"scancel", "--state=PENDING", live.id});
      const std::string after =
          Trim(tb.On(clusters[live.cluster].name, {"squeue", "-h", "-j", live.id, "-o", "%T"}).out);
      if (after != "CANCELLED" && !after.empty()) continue;  // it started meanwhile: it stays
      native(i, to);
    }
    std::size_t started = 0;
    for (std::size_t i = 0; i < next; ++i) {
      for (const auto& [key, c] : seen[i]) {
        if (Started(c.state) && c.start) ++started;
      }
    }
    const bool all_started =
        next == n && in_flight.empty() && started >= n - static_cast<std::size_t>(result.unplaced);
    if ((all_started && EpochNow() >= t0 + load.window_s) || EpochNow() >= stop) break;
  }
  harvest(true);
  // The last look, then nothing of the replay is left running.
  look();
  (void)ClearReplayJobs(options, clusters);
  if (!errors.empty()) return UnavailableError("sbatch failed: " + errors.substr(0, 2000));

  for (std::size_t i = 0; i < n; ++i) {
    JobOutcome& o = result.jobs[i];
    if (submitted_at[i] > 0) o.submit = submitted_at[i] - t0;
    for (const auto& [key, c] : seen[i]) {
      if (Started(c.state) && c.start) {
        o.start = *c.start - t0;
        o.cluster = c.cluster;
        if (Ended(c.state) && c.end) o.end = *c.end - t0;
      } else if (o.cluster.empty()) {
        o.cluster = c.cluster;
      }
    }
    o.moves = seen[i].empty() ? 0 : static_cast<int>(seen[i].size()) - 1;
    result.moves += o.moves;
    // Whole seconds: a start read as before its submission is at it.
    if (o.start != kNever) o.start = std::max(o.start, o.submit);
    if (o.end != kNever) result.end = std::max(result.end, o.end);
  }
  std::fprintf(stderr, "trace_replay: %s: submissions lagged their times by %.2f s at most\n",
               std::string(PolicyName(policy)).c_str(), max_lag);
  return result;
}

}  // namespace skyslurm::trace
