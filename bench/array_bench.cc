// One array spread over the clusters (issue 16), on the testbed
// (scripts/testbed/up), typed as the ready user types it (HOME = a copy of
// $TB/home, the shim first on PATH):
//   1. submit: a 10,000-task one-GPU array, held, typed as `sbatch
//      --sky-any-cluster --array=0-9999 --hold`: the time until sbatch
//      returns with every part submitted (the daemon started by it, as a
//      user's first command starts it, and then warm), and every task is
//      counted in the clusters' queues (squeue -r); against native `sbatch
//      --array=0-9999 --hold` into alpha in the same run;
//   2. makespan: N one-GPU tasks of S seconds (300 of 60 by default; the CI
//      proof, DaemonTest.AnArraySpreadsOverTheClusters..., runs 40 of 10)
//      with 12 of alpha's 16 GPUs busy throughout: spread over the clusters
//      against kept home (--sky-infra=alpha), each from sbatch to the array's
//      end (the last task's end, as skyslurmd records it).
// Every job it makes is cancelled at the end.
//   build/bench/array_bench [submit|makespan|all (all)] [tasks (300)] [seconds (60)]
#include <fmt/format.h>
#include <json/json.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "bench/bench_support.h"
#include "broker/daemon/jobs/job_input.h"
#include "broker/store/job_store.h"
#include "broker/util/command.h"
#include "broker/util/strings.h"

namespace {

using namespace skyslurm;
using bench::Clock;
using bench::Ms;

LocalCommandRunner runner;
std::map<std::string, std::string> tb;
std::string home;

// A command as the ready user types it.
CommandOutput Typed(std::vector<std::string> argv) {
  Command c;
  c.argv = std::move(argv);
  c.env_set = {{"HOME", home},
               {"SLURM_CONF", tb.at("SLURM_CONF_ALPHA")},
               {"PATH", std::string(SKYSLURM_BINARY_DIR) + "/shim/bin:" + std::getenv("PATH")},
               {"SKYSLURM_MIGRATE_AFTER", "3600"},
               {"SKYSLURM_CLUSTERS_DENIED", "delta"}};
  c.env_unset = {"SKYSLURM_CONFIG", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"};
  c.cwd = home;
  c.timeout = std::chrono::seconds(300);
  auto r = runner.Run(c);
  return r.ok() ? *r : CommandOutput{.exit_code = 127, .out = "", .err = r.status().message()};
}

CommandOutput On(const std::string& cluster, std::vector<std::string> argv) {
  std::string upper = cluster;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  Command c;
  c.argv = std::move(argv);
  c.env_set = {{"SLURM_CONF", tb.at("SLURM_CONF_" + upper)}};
  c.timeout = std::chrono::seconds(120);
  auto r = runner.Run(c);
  return r.ok() ? *r : CommandOutput{.exit_code = 127, .out = "", .err = r.status().message()};
}

Json::Value Status(const std::string& sky_id) {
  CommandOutput out =
      Typed({std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm", "status", "--json", sky_id});
  auto j = daemon::ParseJson(out.out);
  return j.ok() ? *j : Json::Value();
}

std::string SkyIdIn(const std::string& text) {
  const auto at = text.find("sky-");
  if (at == std::string::npos) return "";
  return text.substr(at, text.find_first_of(" :\n", at) - at);
}

// Tasks of `job` (an array's id) in `cluster`'s queue, each counted.
std::size_t TasksQueued(const std::string& cluster, const std::string& job) {
  const std::string out = On(cluster, {"squeue", "-h", "-r", "-j", job, "-o", "%i"}).out;
  return static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n'));
}

void SubmitFigures(int tasks) {
  const std::string spec = "--array=0-" + std::to_string(tasks - 1);
  std::printf("1. a %d-task one-GPU array, held, spread (process start %.2f ms):\n", tasks,
              bench::ProcessStartMs());
  for (const char* round : {"daemon started by it", "daemon warm"}) {
    const auto t0 = Clock::now();
    CommandOutput out = Typed({"sbatch", "--sky-any-cluster", spec, "--gpus=1", "-t", "1", "--hold",
                               "-J", "skyarraybench", "-o", "/dev/null", "--wrap", "true"});
    const double ms = Ms(Clock::now() - t0);
    const std::string id = SkyIdIn(out.err);
    if (out.exit_code != 0 || id.empty()) {
      std::printf("   FAILED: %s%s\n", out.out.c_str(), out.err.c_str());
      return;
    }
    std::size_t queued = 0;
    std::string where;
    // Its parts as skyslurmd recorded them; a status that failed is said,
    // never counted as no task queued.
    CommandOutput said =
        Typed({std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm", "status", "--json", id});
    auto st = daemon::ParseJson(said.out);
    if (said.exit_code != 0 || !st.ok() || (*st)["parts"].empty()) {
      std::printf("   %s: sbatch returned in %.0f ms; skyslurm status %s said: %s%s\n", round, ms,
                  id.c_str(), said.out.substr(0, 300).c_str(), said.err.c_str());
      Typed({std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm", "cancel", id});
      continue;
    }
    for (const auto& p : (*st)["parts"]) {
      const std::size_t n = TasksQueued(p["cluster"].asString(), p["native_id"].asString());
      queued += n;
      where += fmt::format(" {} {}", p["cluster"].asString(), n);
    }
    std::printf("   %s: sbatch returned in %.0f ms, %zu tasks queued (%s)\n", round, ms, queued,
                Trim(where).c_str());
    Typed({std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm", "cancel", id});
  }
  const auto t0 = Clock::now();
  CommandOutput native = On("alpha", {"sbatch", "--parsable", spec, "--gpus=1", "-t", "1", "--hold",
                                      "-J", "skyarraybench", "-o", "/dev/null", "--wrap", "true"});
  const double ms = Ms(Clock::now() - t0);
  const std::string id = Trim(native.out.substr(0, native.out.find(';')));
  std::printf("   native sbatch into alpha: %.0f ms, %zu tasks queued\n", ms,
              TasksQueued("alpha", id));
  On("alpha", {"scancel", id});
}

// From sbatch to the array's end; the sky job's final status.
std::pair<double, Json::Value> RunToEnd(std::vector<std::string> argv) {
  const auto t0 = Clock::now();
  CommandOutput out = Typed(argv);
  std::string id = SkyIdIn(out.err);
  if (id.empty() && out.exit_code == 0) {
    // Kept whole at home, sbatch prints Slurm's line only: the sky id is
    // the status of its global id.
    std::smatch m;
    if (std::regex_search(out.out, m, std::regex("job ([0-9]+)"))) {
      id = Status(m[1].str())["job"]["sky_id"].asString();
    }
  }
  if (out.exit_code != 0 || id.empty()) {
    std::printf("   FAILED: %s%s\n", out.out.c_str(), out.err.c_str());
    return {0, Json::Value()};
  }
  Json::Value s;
  for (;;) {
    s = Status(id);
    if (store::IsFinalState(s["job"]["state"].asString())) break;
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  return {Ms(Clock::now() - t0) / 1000, s};
}

void MakespanFigures(int tasks, int seconds) {
  const int minutes = seconds / 60 + 2;
  std::printf("2. %d one-GPU tasks of %d s, 12 of alpha's 16 GPUs busy:\n", tasks, seconds);
  On("alpha", {"sbatch", "-J", "skyarraybench", "-N2", "--gpus-per-node=6", "-t", "600", "-o",
               "/dev/null", "--wrap", "sleep 36000"});
  std::ofstream(home + "/sweep.sh")
      << "#!/bin/bash\n#SBATCH --gpus=1\n#SBATCH -o /dev/null\n"
      << "#SBATCH -J skyarraybench\n#SBATCH -t " << minutes << "\nsleep " << seconds << "\n";
  const std::string spec = "--array=0-" + std::to_string(tasks - 1);
  auto [spread, s] = RunToEnd({"sbatch", "--sky-any-cluster", spec, "sweep.sh"});
  std::string parts;
  for (const auto& p : s["parts"]) {
    parts += fmt::format(" {} {}", p["cluster"].asString(), p["indices"].asString());
  }
  std::printf("   spread: %.0f s (%s;%s)\n", spread, s["job"]["state"].asString().c_str(),
              parts.c_str());
  auto [kept, h] = RunToEnd({"sbatch", "--sky-infra=alpha", spec, "sweep.sh"});
  std::printf("   kept home on alpha: %.0f s (%s); spread/home = %.2f\n", kept,
              h["job"]["state"].asString().c_str(), kept > 0 ? spread / kept : 0);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as it is taken
  const std::string only = argc > 1 ? argv[1] : "all";
  const int tasks = argc > 2 ? std::atoi(argv[2]) : 300;
  const int seconds = argc > 3 ? std::atoi(argv[3]) : 60;
  tb = bench::ReadTestbedEnv(bench::TestbedDir());
  if (!tb.contains("SLURM_CONF_ALPHA")) {
    std::fprintf(stderr, "array_bench: no testbed (scripts/testbed/up)\n");
    return 1;
  }
  home = std::filesystem::temp_directory_path() /
         ("skyslurm-array-bench-" + std::to_string(::getpid()));
  std::filesystem::remove_all(home);
  (void)runner.Run({.argv = {"cp", "-a", bench::TestbedDir() + "/home", home}});
  bench::ForgetDaemonState(home);
  if (only == "submit" || only == "all") SubmitFigures(10'000);
  if (only == "makespan" || only == "all") MakespanFigures(tasks, seconds);
  for (const char* c : {"alpha", "beta", "gamma"}) On(c, {"scancel", "-n", "skyarraybench"});
  bench::StopDaemonOf(home);
  std::filesystem::remove_all(home);
  return 0;
}
