// trace_replay (issue 18): a window of a real GPU-cluster trace replayed
// under every policy a user could pick, on the real testbed or in the
// simulator; the markdown table on stdout, the plots (gnuplot) in --out.
//
//   trace_replay --trace FILE [--window START_H:HOURS] [--time-factor F]
//                [--policies home,slurm-m,failover,round-robin,skyslurm,oracle]
//                [--simulate [--clusters N]] [--load F] [--seed N] [--out DIR]
//                [--drain W] [--keep] [--migrate-after S] [--migrate-gain S] [--max-moves N]
//   trace_replay --trace FILE... --each-window HOURS [--min-jobs N] --simulate
//
// The second form simulates every window of that length of each file with
// at least --min-jobs jobs and prints, per window, the mean waits and the
// issue's aims, then their distribution over the windows. `federation`
// (Slurm federation's sibling jobs, simulated only) is a policy beyond the
// issue's six, asked by name and always in the second form.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/trace/policy_sim.h"
#include "bench/trace/replay_report.h"
#include "bench/trace/testbed_replay.h"
#include "bench/trace/trace_file.h"
#include "bench/trace/trace_load.h"
#include "broker/util/command.h"
#include "broker/util/strings.h"

namespace fs = std::filesystem;
using namespace skyslurm;
using namespace skyslurm::trace;

namespace {

// The testbed's GPU clusters as the load and the simulator see them (its
// scripts/testbed/clusters: alpha 2 x 8 H100, beta 2 x 4 H100, gamma 3 x 8
// A100); --clusters N > 3 repeats those shapes, named c001...
std::vector<ModelCluster> ModelClusters(int n) {
  const std::vector<ModelCluster> testbed = {
      {"alpha", 2, 8, "H100"}, {"beta", 2, 4, "H100"}, {"gamma", 3, 8, "A100"}};
  if (n <= 3) return {testbed.begin(), testbed.begin() + std::max(1, n)};
  std::vector<ModelCluster> out;
  for (int i = 0; i < n; ++i) {
    ModelCluster c = testbed[static_cast<std::size_t>(i) % testbed.size()];
    c.name = fmt::format("c{:03d}", i + 1);
    out.push_back(c);
  }
  return out;
}

struct Run {
  Policy policy;
  SimResult result;
};

std::vector<Run> Simulate(const Load& load, const std::vector<ModelCluster>& clusters,
                          const std::vector<Policy>& policies, double time_factor,
                          const config::FailoverSettings& daemon) {
  std::vector<Run> runs;
  SimOptions options = ScaledOptions(time_factor, daemon);
  for (const Policy p : policies) runs.push_back({p, SimulatePolicy(p, load, clusters, options)});
  return runs;
}

// The plots: the wait CDF per policy, and the GPUs busy over time per
// cluster under each policy, drawn by gnuplot from the data files beside.
void WritePlots(const std::string& dir, const Load& load, const std::vector<ModelCluster>& clusters,
                const std::vector<Run>& runs, const std::vector<PolicyStats>& stats,
                double time_factor) {
  fs::create_directories(dir);
  std::string script =
      "set terminal pngcairo size 1000,600 noenhanced\n"
      "set key outside right\nset grid\n";
  script += "set output 'wait_cdf.png'\nset title 'Wait before start, per policy'\n";
  script += "set xlabel 'wait (trace seconds, log scale)'\nset ylabel 'jobs started within'\n";
  script += "set logscale x\nset yrange [0:1]\nplot ";
  for (std::size_t i = 0; i < stats.size(); ++i) {
    const std::string file = "waits_" + stats[i].policy + ".dat";
    std::ofstream out(dir + "/" + file);
    const auto n = static_cast<double>(stats[i].waits.size());
    for (std::size_t k = 0; k < stats[i].waits.size(); ++k) {
      // On a log scale a wait of 0 s is drawn at 1 s.
      out << std::max(1.0, stats[i].waits[k]) << ' ' << static_cast<double>(k + 1) / n << '\n';
    }
    script += fmt::format("{}'{}' using 1:2 with steps lw 2 title '{}'", i == 0 ? "" : ", ", file,
                          stats[i].policy);
  }
  script += "\nunset logscale x\nset yrange [0:*]\n";
  for (const Run& run : runs) {
    const std::string policy(PolicyName(run.policy));
    script += fmt::format(
        "set output 'gpus_busy_{0}.png'\nset title 'GPUs busy per cluster: {0}'\n"
        "set xlabel 'time (trace hours)'\nset ylabel 'GPUs busy'\nplot ",
        policy);
    for (std::size_t c = 0; c < clusters.size(); ++c) {
      const std::string file = fmt::format("busy_{}_{}.dat", policy, clusters[c].name);
      std::ofstream out(dir + "/" + file);
      for (const auto& [t, gpus] : BusyGpus(load, run.result, clusters[c].name, time_factor)) {
        out << t / 3600 << ' ' << gpus << '\n';
      }
      script +=
          fmt::format("{}'{}' using 1:2 with steps lw 2 title '{} ({} GPUs)'", c == 0 ? "" : ", ",
                      file, clusters[c].name, clusters[c].nodes * clusters[c].gpus_per_node);
    }
    script += "\n";
  }
  std::ofstream(dir + "/plots.gp") << script;
  LocalCommandRunner runner;
  Command gnuplot;
  gnuplot.argv = {"gnuplot", "plots.gp"};
  gnuplot.cwd = dir;
  auto drawn = runner.Run(gnuplot);
  if (!drawn.ok() || !drawn->success()) {
    std::fprintf(stderr, "trace_replay: gnuplot did not draw the plots (%s); data in %s\n",
                 drawn.ok() ? drawn->err.c_str() : drawn.status().message().c_str(), dir.c_str());
  } else {
    std::fprintf(stderr, "trace_replay: plots in %s (wait_cdf.png, gpus_busy_<policy>.png)\n",
                 dir.c_str());
  }
}

std::optional<std::pair<double, double>> ParseWindow(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  try {
    std::size_t used = 0;
    const double start = std::stod(text.substr(0, colon), &used);
    if (used != colon) return std::nullopt;
    const std::string rest = text.substr(colon + 1);
    const double hours = std::stod(rest, &used);
    if (used != rest.size() || start < 0 || hours <= 0) return std::nullopt;
    return std::make_pair(start, hours);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

const PolicyStats* Find(const std::vector<PolicyStats>& stats, const std::string& policy) {
  for (const PolicyStats& s : stats) {
    if (s.policy == policy) return &s;
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Replays a window of a GPU-cluster trace under each policy (issue 18)"};
  std::vector<std::string> traces;
  std::string window_text = "0:24";
  double time_factor = 0;  // 0: 1 simulated, 60 on the testbed
  std::string policies_text = "home,slurm-m,failover,round-robin,skyslurm,oracle";
  bool simulate = false;
  int clusters_n = 3;
  double load_share = 0.9;
  std::uint64_t seed = 1;
  std::string out_dir;
  double each_window = 0;
  int min_jobs = 100;
  double drain_windows = -1;
  bool keep_home = false;
  config::FailoverSettings daemon;  // skyslurmd's, in trace time  // -1: on the testbed one window,
                                    // simulated until all start
  app.add_option("--trace", traces, "a trace file (the shared schema)")->required();
  app.add_option("--window", window_text, "START_H:HOURS of the trace (default 0:24)");
  app.add_option("--time-factor", time_factor,
                 "trace seconds per replay second (default 60 on the testbed, 1 simulated)");
  app.add_option("--policies", policies_text,
                 "the policies, comma-separated (also: federation, simulated)");
  app.add_flag("--simulate", simulate, "simulate instead of replaying on the testbed");
  app.add_option("--clusters", clusters_n, "simulated clusters (default 3: the testbed's)");
  app.add_option("--load", load_share, "offered GPU load, of the modelled capacity (0.9)");
  app.add_option("--seed", seed, "the load's seed (1)");
  app.add_option("--out", out_dir, "where the plots go (none: no plots)");
  app.add_option("--each-window", each_window,
                 "simulate every window of this many hours of each file (the aims' check)");
  app.add_option("--min-jobs", min_jobs, "with --each-window: windows with fewer jobs skipped");
  app.add_option("--drain", drain_windows,
                 "stop this many window lengths after the window's end; what has not started "
                 "then is left unstarted (default: 1 on the testbed, none simulated)");
  app.add_flag("--keep", keep_home,
               "on the testbed, keep the replay user's HOME (skyslurmd's records) afterwards");
  app.add_option("--migrate-after", daemon.migrate_after,
                 "skyslurm: a job pends this long (trace s) before a move is weighed (120)");
  app.add_option("--migrate-gain", daemon.migrate_gain,
                 "skyslurm: a move must start it this much sooner (trace s, 300)");
  app.add_option("--max-moves", daemon.max_moves, "skyslurm: moves per job (3; 0: none)");
  CLI11_PARSE(app, argc, argv);

  std::vector<Policy> policies;
  for (const std::string& name : SplitList(policies_text)) {
    const auto p = PolicyNamed(name);
    if (!p) {
      std::fprintf(stderr,
                   "trace_replay: --policies: unknown policy '%s' (home, slurm-m, failover, "
                   "round-robin, skyslurm, oracle, federation)\n",
                   name.c_str());
      return 2;
    }
    policies.push_back(*p);
  }
  const auto window = ParseWindow(window_text);
  if (!window) {
    std::fprintf(stderr, "trace_replay: --window: '%s' is not START_H:HOURS (e.g. 0:24)\n",
                 window_text.c_str());
    return 2;
  }
  if (time_factor <= 0) time_factor = simulate ? 1 : 60;
  if (clusters_n < 1) {
    std::fprintf(stderr, "trace_replay: --clusters: at least 1\n");
    return 2;
  }
  if (!simulate && (clusters_n != 3 || each_window > 0)) {
    std::fprintf(stderr, "trace_replay: --clusters and --each-window need --simulate\n");
    return 2;
  }
  const std::vector<ModelCluster> clusters = ModelClusters(clusters_n);
  LoadOptions load_options;
  load_options.load = load_share;
  load_options.time_factor = time_factor;
  load_options.seed = seed;
  std::printf(
      "<!-- trace_replay: %s; a process start costs %.2f ms here -->\n",
      simulate ? fmt::format("simulated, {} clusters", clusters.size()).c_str() : "on the testbed",
      bench::ProcessStartMs());

  if (each_window > 0) {
    // The aims over every window: skyslurm's mean wait <= 0.5 x -M's and
    // the failover's, <= 1.25 x the oracle's + 60 s; p95 <= -M's.
    std::printf(
        "| trace | window h | jobs | home | slurm-m | failover | round-robin | skyslurm | "
        "oracle | federation | sky/-M | sky/failover | oracle/-M | federation/-M | "
        "sky p95 <= -M p95 | aims |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
    int windows = 0, met = 0, p95_met = 0;
    // oracle/-M: the clairvoyant reference against -M, what bounds how far
    // any placement at submission can go below -M.
    std::vector<double> vs_m, vs_failover, oracle_vs_m, federation_vs_m;
    const std::vector<Policy> all = {Policy::kHome,       Policy::kSlurmM,   Policy::kFailover,
                                     Policy::kRoundRobin, Policy::kSkyslurm, Policy::kOracle,
                                     Policy::kFederation};
    for (const std::string& path : traces) {
      auto jobs = ReadTrace(path);
      if (!jobs.ok()) {
        std::fprintf(stderr, "trace_replay: %s\n", jobs.status().message().c_str());
        return 1;
      }
      const double span_h = jobs->empty() ? 0 : jobs->back().submit_s / 3600;
      for (double start = 0; start + each_window <= span_h + 1e-9; start += each_window) {
        const auto slice = TraceWindow(*jobs, start, each_window);
        if (static_cast<int>(slice.size()) < min_jobs) continue;
        load_options.window_s = each_window * 3600;
        const Load load = ShapeLoad(slice, clusters, load_options);
        std::vector<PolicyStats> stats;
        for (const Run& run : Simulate(load, clusters, all, time_factor, daemon)) {
          stats.push_back(
              Summarise(PolicyName(run.policy), load, run.result, clusters, time_factor));
        }
        const PolicyStats& sky = *Find(stats, "skyslurm");
        const PolicyStats& m = *Find(stats, "slurm-m");
        const PolicyStats& f = *Find(stats, "failover");
        const PolicyStats& o = *Find(stats, "oracle");
        auto ratio = [](double a, double b) {
          return b > 0 ? a / b : (a > 0 ? std::numeric_limits<double>::infinity() : 0.0);
        };
        const double r_m = ratio(sky.mean_wait_s, m.mean_wait_s);
        const double r_f = ratio(sky.mean_wait_s, f.mean_wait_s);
        const bool p95 = sky.p95_wait_s <= m.p95_wait_s;
        p95_met += p95 ? 1 : 0;
        const bool ok =
            r_m <= 0.5 && r_f <= 0.5 && sky.mean_wait_s <= 1.25 * o.mean_wait_s + 60 && p95;
        ++windows;
        met += ok ? 1 : 0;
        vs_m.push_back(r_m);
        vs_failover.push_back(r_f);
        oracle_vs_m.push_back(ratio(o.mean_wait_s, m.mean_wait_s));
        federation_vs_m.push_back(ratio(Find(stats, "federation")->mean_wait_s, m.mean_wait_s));
        std::string row = fmt::format("| {} | {:g}-{:g} | {} |", fs::path(path).filename().string(),
                                      start, start + each_window, load.jobs.size());
        for (const PolicyStats& s : stats) row += fmt::format(" {:.0f} |", s.mean_wait_s);
        row += fmt::format(" {:.2f} | {:.2f} | {:.2f} | {:.2f} | {} | {} |\n", r_m, r_f,
                           oracle_vs_m.back(), federation_vs_m.back(), p95 ? "yes" : "no",
                           ok ? "met" : "missed");
        std::fputs(row.c_str(), stdout);
        std::fflush(stdout);
      }
    }
    std::sort(vs_m.begin(), vs_m.end());
    std::sort(vs_failover.begin(), vs_failover.end());
    std::sort(oracle_vs_m.begin(), oracle_vs_m.end());
    std::sort(federation_vs_m.begin(), federation_vs_m.end());
    std::printf(
        "\n%d windows of %g h with at least %d jobs (mean waits in trace seconds); aims met on "
        "%d. skyslurm/-M mean wait: median %.2f, p90 %.2f, max %.2f; skyslurm/failover: median "
        "%.2f, p90 %.2f, max %.2f; oracle/-M: min %.2f, median %.2f; federation/-M: median "
        "%.2f, p90 %.2f; skyslurm's p95 no worse than -M's on %d\n",
        windows, each_window, min_jobs, met, Quantile(vs_m, 0.5), Quantile(vs_m, 0.9),
        vs_m.empty() ? 0 : vs_m.back(), Quantile(vs_failover, 0.5), Quantile(vs_failover, 0.9),
        vs_failover.empty() ? 0 : vs_failover.back(), oracle_vs_m.empty() ? 0 : oracle_vs_m.front(),
        Quantile(oracle_vs_m, 0.5), Quantile(federation_vs_m, 0.5), Quantile(federation_vs_m, 0.9),
        p95_met);
    return 0;
  }

  if (traces.size() != 1) {
    std::fprintf(stderr, "trace_replay: one --trace, unless --each-window\n");
    return 2;
  }
  auto jobs = ReadTrace(traces[0]);
  if (!jobs.ok()) {
    std::fprintf(stderr, "trace_replay: %s\n", jobs.status().message().c_str());
    return 1;
  }
  const auto slice = TraceWindow(*jobs, window->first, window->second);
  load_options.window_s = window->second * 3600;
  const Load load = ShapeLoad(slice, clusters, load_options);
  std::printf(
      "<!-- %s, hours %g-%g: %zu jobs (%d capped to the largest cluster, %d never ran, left "
      "out); arrivals x%.3f for a %.0f%% GPU load (the window's own: %.1f%%); time factor %g; "
      "seed %llu -->\n",
      traces[0].c_str(), window->first, window->first + window->second, load.jobs.size(),
      load.capped, load.never_ran, load.arrival_scale, load.replay_load * 100,
      load.offered_load * 100, time_factor, static_cast<unsigned long long>(seed));
  std::vector<Run> runs;
  std::vector<std::string> as_simulated;  // testbed runs: each simulated as it was submitted
  // The replay stops `drain` after the window's end (replay seconds): what
  // has not started by then is left unstarted, in the simulation alike.
  const double drain_s = drain_windows * load.window_s;
  if (simulate) {
    SimOptions options = ScaledOptions(time_factor, daemon);
    if (drain_windows >= 0) options.horizon_s = load.window_s + drain_s;
    for (const Policy p : policies) runs.push_back({p, SimulatePolicy(p, load, clusters, options)});
  } else {
    TestbedOptions tb;
    tb.testbed = bench::ReadTestbedEnv(bench::TestbedDir());
    if (!tb.testbed.contains("SLURM_CONF_ALPHA")) {
      std::fprintf(stderr,
                   "trace_replay: no testbed (scripts/testbed/up --with-dbd), or --simulate\n");
      return 1;
    }
    tb.shim_bin = std::string(SKYSLURM_BINARY_DIR) + "/shim/bin";
    tb.scaled = ScaledOptions(time_factor, daemon);
    tb.drain_s = drain_windows >= 0 ? drain_s : load.window_s;
    SimOptions oracle_options = tb.scaled;
    oracle_options.horizon_s = load.window_s + tb.drain_s;
    for (const Policy p : policies) {
      // An offline schedule, and federation's, on the same capacities.
      if (p == Policy::kOracle || p == Policy::kFederation) {
        runs.push_back({p, SimulatePolicy(p, load, clusters, oracle_options)});
        continue;
      }
      // skyslurm's user: a copy of the testbed's, its daemon fresh.
      tb.home = (fs::temp_directory_path() / fmt::format("skyslurm-trace-replay-{}", ::getpid()))
                    .string();
      fs::remove_all(tb.home);
      fs::copy(bench::TestbedDir() + "/home", tb.home, fs::copy_options::recursive);
      bench::ForgetDaemonState(tb.home);
      std::ofstream(tb.home + "/.config/skyslurm/skyslurm.yaml", std::ios::app)
          << "tie_tolerance: " << tb.scaled.tie_tolerance_s << "s\n";
      std::fprintf(stderr, "trace_replay: %s on the testbed (%zu jobs over %.0f s)...\n",
                   std::string(PolicyName(p)).c_str(), load.jobs.size(), load.window_s);
      auto replayed = ReplayOnTestbed(p, load, clusters, tb);
      bench::StopDaemonOf(tb.home);
      if (keep_home) {
        std::fprintf(stderr, "trace_replay: %s's user kept in %s (skyslurmd's records)\n",
                     std::string(PolicyName(p)).c_str(), tb.home.c_str());
      } else {
        fs::remove_all(tb.home);
      }
      if (!replayed.ok()) {
        std::fprintf(stderr, "trace_replay: %s: %s\n", std::string(PolicyName(p)).c_str(),
                     replayed.status().message().c_str());
        return 1;
      }
      // The same policy simulated on the submissions as they were made (a
      // burst through skyslurmd lags its times by seconds): what holds the
      // simulator to the testbed, the submission path aside.
      Load as_submitted = load;
      double before = 0;
      for (std::size_t i = 0; i < load.jobs.size(); ++i) {
        const double at = replayed->jobs[i].submit;
        before = std::max(before, at > 0 ? at : load.jobs[i].submit_s);
        as_submitted.jobs[i].submit_s = before;
      }
      const PolicyStats simulated = Summarise(
          PolicyName(p), as_submitted, SimulatePolicy(p, as_submitted, clusters, oracle_options),
          clusters, time_factor);
      as_simulated.push_back(fmt::format(
          "<!-- {} simulated on the testbed's own submission times: mean wait {:.0f} s, median "
          "{:.0f} s, p95 {:.0f} s, {} moves -->\n",
          simulated.policy, simulated.mean_wait_s, simulated.median_wait_s, simulated.p95_wait_s,
          simulated.moves));
      runs.push_back({p, *replayed});
    }
  }
  std::vector<PolicyStats> stats;
  for (const Run& run : runs) {
    stats.push_back(Summarise(PolicyName(run.policy), load, run.result, clusters, time_factor));
  }
  std::fputs(MarkdownTable(stats).c_str(), stdout);
  for (const std::string& line : as_simulated) std::fputs(line.c_str(), stdout);
  std::string costs;
  for (const PolicyStats& s : stats) {
    if (s.decision_us > 0) costs += fmt::format(" {} {:.1f} us;", s.policy, s.decision_us);
  }
  if (!costs.empty()) std::printf("\nPlacement decision cost per job:%s\n", costs.c_str());
  std::fflush(stdout);
  if (!out_dir.empty()) WritePlots(out_dir, load, clusters, runs, stats, time_factor);
  return 0;
}
