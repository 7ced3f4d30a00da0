// Cloud overflow on a real trace (issue 15): a seeded window of jobs of the
// Philly trace (../shared/traces, read at run time), their arrivals and
// run times divided by `scale`, replayed on the testbed as a user submits
// them (`sbatch --sky-any-cluster`, the shim and skyslurmd) over alpha,
// beta, gamma and delta, the cloud, three times:
//   never     the fixed clusters only (--sky-any-cluster=alpha,beta,gamma)
//   at-once   overflow.after 0: the cloud whenever it starts a job sooner
//   skyslurm  overflow.after the default 15 min (scaled): the cloud only
//             when no fixed cluster starts the job within it, and
//             overflow.worth `worth` (a GPU-hour of waiting; wait and cost
//             scale alike, so it is not scaled): only when the wait it saves
//             is worth its cost (a 1-GPU job rarely boots a whole node, it
//             joins nodes others keep up); run_times `run_times` (limits, or
//             history: the jobs ahead run the share of their limits the jobs
//             lately ended on their cluster ran; the trace's jobs get limits
//             of twice their run times, as users ask for more than they use);
//             estimates `estimates` (model, or calibrated: each cluster's
//             waits taken at the ratio of real to estimated waits of the jobs
//             skyslurmd placed there so far in the run)
// with the placement's tie tolerance and the daemon's moves (migrate_after,
// migrate_gain, moves_per_cluster) scaled alike. For each: the mean and
// p90 wait (start minus arrival, from each cluster's accounting), where
// jobs ran, and what the cloud billed (delta's ledger: node-hours from
// power-up request to power-down, at the user's prices). The aim: skyslurm
// keeps at least 80% of at-once's cut in mean wait for at most half its
// cloud spend. Each run starts with delta powered down and its queues
// empty; Kubernetes (kappa) is left out.
//
//   build/bench/cloud_bench [jobs=200] [seed=1] [scale=30] [max_run_s=300]
//                           [trace=../shared/traces/philly/by_vc/jobs_6214e9.csv]
//                           [policies=never,at-once,skyslurm] [worth=2]
//                           [run_times=limits] [estimates=model]
// SKYSLURM_BENCH_KEEP=1 keeps each run's home and daemon store.
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "broker/cloud/ledger.h"
#include "broker/util/command.h"
#include "broker/util/strings.h"
#include "broker/util/timestamp.h"

namespace skyslurm {
namespace {

LocalCommandRunner runner;

// Ctrl-C or a kill: the run stops submitting and waiting, and cleans up.
std::atomic<bool> interrupted{false};
extern "C" void OnSignal(int) { interrupted = true; }

// The run's jobs still queued or running, on every cluster, cancelled.
void CancelRun(const std::map<std::string, std::string>& confs, const std::string& prefix) {
  for (const auto& [cluster, conf] : confs) {
    const Command list{.argv = {"squeue", "-h", "-a", "-o", "%i %j"},
                       .env_set = {{"SLURM_CONF", conf}}};
    auto out = runner.Run(list);
    if (!out.ok()) continue;
    Command cancel{.argv = {"scancel"}, .env_set = {{"SLURM_CONF", conf}}};
    for (const std::string& line : SplitList(out->out, '\n')) {
      const auto space = line.find(' ');
      if (space != std::string::npos && line.compare(space + 1, prefix.size(), prefix) == 0) {
        cancel.argv.push_back(line.substr(0, space));
      }
    }
    if (cancel.argv.size() > 1) (void)runner.Run(cancel);
  }
}

struct TraceJob {
  double arrival = 0;  // seconds after the run's start (scaled)
  int run_s = 0;       // scaled run time
  int nodes = 1;
  int gpus_per_node = 1;
};

// The window: `count` consecutive jobs (with a run time and GPUs) from a
// seeded start in the trace.
std::vector<TraceJob> ReadWindow(const std::string& path, int count, unsigned seed, double scale,
                                 int max_run) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // job_id,submit_s,runtime_s,gpus,nodes,gpu_type,vc,status
  struct Row {
    double submit, runtime;
    int gpus;
  };
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string field; std::getline(ss, field, ',');) f.push_back(field);
    if (f.size() < 4 || f[2].empty() || f[3].empty()) continue;
    const int gpus = std::stoi(f[3]);
    if (gpus <= 0) continue;
    rows.push_back({std::stod(f[1]), std::stod(f[2]), gpus});
  }
  if (rows.size() < static_cast<std::size_t>(count)) return {};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, rows.size() - static_cast<std::size_t>(count));
  const std::size_t first = pick(rng);
  std::vector<TraceJob> jobs;
  for (std::size_t i = first; i < first + static_cast<std::size_t>(count); ++i) {
    TraceJob j;
    j.arrival = (rows[i].submit - rows[first].submit) / scale;
    j.run_s = std::clamp(static_cast<int>(std::lround(rows[i].runtime / scale)), 2, max_run);
    // Up to 16 GPUs (two of the testbed's 8-GPU nodes), 8 a node at most.
    const int gpus = std::min(rows[i].gpus, 16);
    j.nodes = (gpus + 7) / 8;
    j.gpus_per_node = (gpus + j.nodes - 1) / j.nodes;
    jobs.push_back(j);
  }
  return jobs;
}

struct Ran {
  std::string cluster;
  std::time_t start = 0;
  std::time_t end = 0;
  std::string state;
};

// Every job named `prefix`N that ran on `cluster` since `since`, by N.
void ReadAccounting(const std::string& cluster, const std::string& slurm_conf,
                    const std::string& prefix, std::time_t since, std::map<int, Ran>* ran,
                    int* live) {
  const std::string start = FormatUtcTimestamp(since - 60);
  Command c{
      .argv = {"sacct", "-X", "-a", "-n", "-P", "-S", start, "-o", "JobName%60,Start,End,State"},
      .env_set = {{"SLURM_CONF", slurm_conf}, {"TZ", "UTC"}}};
  auto out = runner.Run(c);
  if (!out.ok()) return;
  for (const std::string& line : SplitList(out->out, '\n')) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string field; std::getline(ss, field, '|');) f.push_back(field);
    if (f.size() < 4 || !f[0].starts_with(prefix)) continue;
    const int n = std::atoi(f[0].c_str() + prefix.size());
    const std::string state = f[3].substr(0, f[3].find(' '));
    if (state == "PENDING" || state == "RUNNING" || state == "CONFIGURING" || state == "REQUEUED" ||
        state == "COMPLETING") {
      ++*live;
      continue;
    }
    const auto s = ParseUtcTimestamp(f[1]);
    if (!s) continue;  // cancelled before it started: a copy moved elsewhere
    (*ran)[n] = {cluster, *s, ParseUtcTimestamp(f[2]).value_or(0), state};
  }
}

struct Figures {
  std::string policy;
  double mean_wait = 0, p50 = 0, p90 = 0;
  std::map<std::string, int> where;
  double cloud_node_s = 0, cloud_gpu_s = 0, cloud_cost = 0;
  int ran = 0, failed = 0;
  double took_s = 0;
};

// delta's power-ups requested since `since`: all powered down?
bool CloudDown(const std::string& ledger, std::time_t since) {
  std::ifstream in(ledger);
  std::stringstream text;
  text << in.rdbuf();
  auto rows = cloud::ParseLedger(text.str(), ledger);
  if (!rows.ok()) return false;
  for (const auto& r : *rows) {
    if (r.requested >= since && r.down == 0) return false;
  }
  return true;
}

}  // namespace
}  // namespace skyslurm

int main(int argc, char** argv) {
  using namespace skyslurm;
  const int count = argc > 1 ? std::atoi(argv[1]) : 200;
  const unsigned seed = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 1;
  const double scale = argc > 3 ? std::atof(argv[3]) : 30;
  const int max_run = argc > 4 ? std::atoi(argv[4]) : 300;
  const std::string trace = argc > 5 ? argv[5]
                                     : std::string(SKYSLURM_SOURCE_DIR) +
                                           "/../shared/traces/philly/by_vc/jobs_6214e9.csv";
  const std::vector<std::string> policies =
      SplitList(argc > 6 ? argv[6] : "never,at-once,skyslurm");
  const double worth = argc > 7 ? std::atof(argv[7]) : 2;
  const std::string run_times = argc > 8 ? argv[8] : "limits";
  const std::string estimates = argc > 9 ? argv[9] : "model";
  const std::string tb = bench::TestbedDir();
  const auto env = bench::ReadTestbedEnv(tb);
  if (env.empty()) {
    std::fprintf(stderr, "no testbed at %s: run scripts/testbed/up\n", tb.c_str());
    return 1;
  }
  const std::vector<TraceJob> jobs = ReadWindow(trace, count, seed, scale, max_run);
  if (jobs.empty()) {
    std::fprintf(stderr, "%s: fewer than %d jobs with a run time and GPUs\n", trace.c_str(), count);
    return 1;
  }
  const std::string ledger = tb + "/cloud/ledger.csv";
  std::string boot = "?", suspend = "?";
  std::ifstream(tb + "/cloud/boot") >> boot;
  std::ifstream(tb + "/cloud/suspend") >> suspend;
  double gpu_s = 0;
  for (const auto& j : jobs) gpu_s += j.run_s * j.nodes * j.gpus_per_node;
  std::printf(
      "cloud_bench: %d jobs of %s (seed %u), times / %.0f (run times 2..%d s), "
      "%.1f GPU-hours of work (%.0f at trace scale) arriving over %.0f s\n",
      count, trace.c_str(), seed, scale, max_run, gpu_s / 3600, gpu_s * scale / 3600,
      jobs.back().arrival);
  std::printf(
      "testbed: delta boots in %s s, powers down after %s s idle; process start %.2f ms; "
      "skyslurm's overflow.worth $%.2f a GPU-hour of waiting, run_times: %s, estimates: %s; "
      "every run's moves: migrate_after %ld s, migrate_gain %ld s, moves_per_cluster %ld a "
      "minute\n",
      boot.c_str(), suspend.c_str(), bench::ProcessStartMs(), worth, run_times.c_str(),
      estimates.c_str(), std::max(1L, std::lround(120 / scale)),
      std::max(1L, std::lround(300 / scale)), std::lround(10 * scale));
  const std::map<std::string, std::string> confs = {{"alpha", env.at("SLURM_CONF_ALPHA")},
                                                    {"beta", env.at("SLURM_CONF_BETA")},
                                                    {"gamma", env.at("SLURM_CONF_GAMMA")},
                                                    {"delta", env.at("SLURM_CONF_DELTA")}};
  const std::map<std::string, double> price = {{"cloud", 4.00},
                                               {"spot", 1.50}};  // the ready user's

  // This build's shim by its path: a PATH lookup happens in this process's
  // PATH, and a real sbatch would hand the job to whatever build the
  // testbed's plugin names.
  const std::string shim_sbatch = std::string(SKYSLURM_BINARY_DIR) + "/shim/bin/sbatch";
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  char work_template[] = "/tmp/skyslurm-cloud-bench-XXXXXX";
  const std::string work = mkdtemp(work_template);
  std::vector<Figures> results;
  for (const std::string& policy : policies) {
    // A clean start: delta powered down.
    for (int i = 0; i < 600 && !interrupted && !CloudDown(ledger, 0); ++i) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    const std::string home = work + "/" + policy;
    (void)runner.Run({.argv = {"cp", "-a", tb + "/home", home}});
    bench::ForgetDaemonState(home);
    const std::string settings = home + "/.config/skyslurm/skyslurm.yaml";
    {
      std::ofstream out(settings, std::ios::app);
      out << fmt::format("tie_tolerance: {}\n", std::max(1L, std::lround(60 / scale)));
      // The daemon's moves are the policy's time constants too: unscaled, a
      // job would pend an hour of the trace's time before a move is weighed.
      // moves_per_cluster is a rate: 10 a minute of the trace's time is 10 x
      // scale a real minute.
      out << fmt::format("migrate_after: {}\nmigrate_gain: {}\nmoves_per_cluster: {}\n",
                         std::max(1L, std::lround(120 / scale)),
                         std::max(1L, std::lround(300 / scale)), std::lround(10 * scale));
      if (policy == "at-once") out << "overflow: { after: 0 }\n";
      if (policy == "skyslurm") {
        out << fmt::format("overflow: {{ after: {}, worth: {} }}\n",
                           std::max(1L, std::lround(900 / scale)), worth);
        out << fmt::format("run_times: {}\n", run_times);
        out << fmt::format("estimates: {}\n", estimates);
      }
    }
    const std::string any = policy == "never" ? "--sky-any-cluster=alpha,beta,gamma"
                                              : "--sky-any-cluster=alpha,beta,gamma,delta";
    const std::time_t started = std::time(nullptr);
    // A run's own names: an earlier run's jobs (an interrupted one's) are not its.
    const std::string prefix = fmt::format("cb{}-{}-{}-", seed, policy, started % 100000);
    const auto t0 = bench::Clock::now();
    std::vector<double> arrived(jobs.size());
    std::mutex mu;
    std::size_t next = 0;
    int refused = 0;
    // Submitters: each takes the next job and submits it when it arrives
    // (four: the testbed's two cores also run every cluster).
    std::vector<std::thread> submitters;
    for (int w = 0; w < 4; ++w) {
      submitters.emplace_back([&] {
        for (;;) {
          std::size_t i = 0;
          {
            std::lock_guard lock(mu);
            if (next == jobs.size()) return;
            i = next++;
          }
          const TraceJob& j = jobs[i];
          if (interrupted) return;
          std::this_thread::sleep_until(
              t0 + std::chrono::milliseconds(static_cast<long>(j.arrival * 1000)));
          arrived[i] =
              std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                  .count();
          const int limit_min = std::max(1, (j.run_s * 2 + 59) / 60);
          Command c{
              .argv = {shim_sbatch, any, "--parsable", "-J", prefix + std::to_string(i), "-N",
                       std::to_string(j.nodes), "--gres=gpu:" + std::to_string(j.gpus_per_node),
                       "-t", std::to_string(limit_min), "-o", "/dev/null", "--wrap",
                       "sleep " + std::to_string(j.run_s)},
              .env_set = {{"HOME", home},
                          {"SLURM_CONF", env.at("SLURM_CONF_ALPHA")},
                          {"PATH",
                           std::string(SKYSLURM_BINARY_DIR) + "/shim/bin:" + std::getenv("PATH")}},
              .env_unset = {"SKYSLURM_CONFIG", "SKYSLURM_SITE_CONFIG", "SKYSLURM_CLUSTERS_FILE",
                            "XDG_CONFIG_HOME", "XDG_STATE_HOME"},
              .cwd = home,
              .timeout = std::chrono::seconds(120)};
          auto out = runner.Run(c);
          if (!out.ok() || out->exit_code != 0) {
            std::lock_guard lock(mu);
            ++refused;
            std::fprintf(stderr, "job %zu: %s\n", i,
                         out.ok() ? out->err.c_str() : out.status().message().c_str());
          }
        }
      });
    }
    for (auto& t : submitters) t.join();
    // Every job ends (or the run gives up after an hour).
    std::map<int, Ran> ran;
    for (int round = 0; round < 720 && !interrupted; ++round) {
      std::this_thread::sleep_for(std::chrono::seconds(5));
      std::map<int, Ran> now;
      int live = 0;
      for (const auto& [cluster, conf] : confs) {
        ReadAccounting(cluster, conf, prefix, started, &now, &live);
      }
      ran = std::move(now);
      if (live == 0 && ran.size() + static_cast<std::size_t>(refused) >= jobs.size()) break;
    }
    Figures f;
    f.policy = policy;
    f.took_s = std::chrono::duration<double>(bench::Clock::now() - t0).count();
    std::vector<double> waits;
    for (const auto& [i, r] : ran) {
      waits.push_back(
          std::max(0.0, static_cast<double>(r.start) - arrived[static_cast<std::size_t>(i)]));
      ++f.where[r.cluster];
      ++f.ran;
      if (r.state != "COMPLETED") ++f.failed;
    }
    f.failed += refused;
    for (double w : waits) f.mean_wait += w / static_cast<double>(waits.size());
    f.p50 = bench::Quantile(waits, 0.5);
    f.p90 = bench::Quantile(waits, 0.9);
    // What the cloud billed for this run: its power-ups, once powered down.
    for (int i = 0; i < 600 && !interrupted && !CloudDown(ledger, started); ++i) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    std::ifstream in(ledger);
    std::stringstream text;
    text << in.rdbuf();
    if (auto rows = cloud::ParseLedger(text.str(), ledger); rows.ok()) {
      for (const auto& r : *rows) {
        if (r.requested < started) continue;
        const double s =
            static_cast<double>((r.down != 0 ? r.down : std::time(nullptr)) - r.requested);
        f.cloud_node_s += s;
        f.cloud_gpu_s += s * 8;
        f.cloud_cost += s * 8 * price.at(r.partition == "spot" ? "spot" : "cloud") / 3600;
      }
    }
    // Whatever is left (an interrupted run, one that gave up): cancelled.
    CancelRun(confs, prefix);
    bench::StopDaemonOf(home);
    if (interrupted) {
      std::filesystem::remove_all(work);
      std::fprintf(stderr, "cloud_bench: interrupted; its jobs cancelled\n");
      return 130;
    }
    std::printf(
        "  %-9s ran %3d (%d not completed) in %4.0f s: mean wait %6.1f s, p50 %6.1f s, "
        "p90 %6.1f s; cloud %5.2f GPU-h, $%.2f;",
        policy.c_str(), f.ran, f.failed, f.took_s, f.mean_wait, f.p50, f.p90, f.cloud_gpu_s / 3600,
        f.cloud_cost);
    for (const auto& [c, n] : f.where) std::printf(" %s %d", c.c_str(), n);
    std::printf("\n");
    std::fflush(stdout);
    results.push_back(f);
  }
  const Figures* never = nullptr;
  const Figures* at_once = nullptr;
  const Figures* sky = nullptr;
  for (const auto& f : results) {
    if (f.policy == "never") never = &f;
    if (f.policy == "at-once") at_once = &f;
    if (f.policy == "skyslurm") sky = &f;
  }
  if (never && at_once && sky) {
    const double cut_at_once = never->mean_wait - at_once->mean_wait;
    const double cut_sky = never->mean_wait - sky->mean_wait;
    std::printf(
        "at trace scale (x%.0f): mean wait never %.2f h, at-once %.2f h, skyslurm %.2f h; "
        "cloud GPU-hours at-once %.0f, skyslurm %.0f\n",
        scale, never->mean_wait * scale / 3600, at_once->mean_wait * scale / 3600,
        sky->mean_wait * scale / 3600, at_once->cloud_gpu_s * scale / 3600,
        sky->cloud_gpu_s * scale / 3600);
    std::printf(
        "skyslurm keeps %.0f%% of at-once's cut in mean wait (aim >= 80%%) for %.0f%% of "
        "its cloud spend (aim <= 50%%)\n",
        cut_at_once > 0 ? 100 * cut_sky / cut_at_once : 0,
        at_once->cloud_cost > 0 ? 100 * sky->cloud_cost / at_once->cloud_cost : 0);
  }
  // SKYSLURM_BENCH_KEEP: each run's home (its daemon's store and log) stays, to
  // read the decisions behind the figures.
  if (std::getenv("SKYSLURM_BENCH_KEEP") != nullptr) {
    std::printf("kept: %s (a folder per policy; skyslurmd.db and its log under .local/state)\n",
                work.c_str());
  } else {
    std::filesystem::remove_all(work);
  }
  return 0;
}
