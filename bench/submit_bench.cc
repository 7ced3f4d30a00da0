// What the drop-in costs and saves, as ratios against native Slurm measured
// in the same run on the testbed (scripts/testbed/up), beside what one
// process start costs on the machine:
//   1. the shim passing through (no --sky-* option) against a minimal static
//      front that only execs the real sbatch (bench/exec_front.cc; aim: within
//      1.05x), and against the real sbatch itself: `sbatch --version` (the
//      bare cost of the extra exec) and a real held submission to the home
//      cluster, alternating;
//   2. `sbatch --sky-any-cluster job.sh` for an A100 job (only gamma has
//      A100s, so it lands on a peer; the user's skyslurmd warm) against
//      Slurm's own `sbatch -M alpha,beta,gamma` (slurmdbd; aim: 0.5x), and
//      the same pinned with --sky-infra=gamma against a fresh
//      `ssh gamma sbatch` (aim: 0.25x). The ready user reaches gamma with
//      `access: rest` (slurmrestd over the SSH connection; aim: 0.25x
//      `sbatch -M`); the same user with `access: ssh` (sbatch through the
//      resident agent) is measured beside it.
// Every job is submitted held and cancelled at the end.
//
//   build/bench/submit_bench [passthrough runs (200)] [routed runs (20)]
//   SKYSLURM_BENCH_SHIM_BIN=DIR build/bench/submit_bench ...   # another shim
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "broker/util/command.h"
#include "broker/util/strings.h"

namespace {

using namespace skyslurm;
using bench::Clock;
using bench::Median;
using bench::Ms;
using bench::Quantile;

LocalCommandRunner runner;

using bench::Timed;
Timed Time(const Command& c) { return bench::TimeRun(runner, c); }

void Line(const char* what, const std::vector<double>& v) {
  std::printf("  %-44s median %8.2f ms   p90 %8.2f ms\n", what, Median(v), Quantile(v, 0.9));
}

// The job ids in "Submitted batch job N[ on cluster C]" or "N[;C]".
void CollectId(const std::string& cluster, const CommandOutput& out,
               std::map<std::string, std::vector<std::string>>* ids) {
  std::smatch m;
  if (std::regex_search(out.out, m, std::regex("([0-9]+)(;| on cluster )?([a-z]*)"))) {
    (*ids)[m[3].length() > 0 ? m[3].str() : cluster].push_back(m[1]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int passthrough_runs = argc > 1 ? std::atoi(argv[1]) : 200;
  const int routed_runs = argc > 2 ? std::atoi(argv[2]) : 20;
  const std::string tb = bench::TestbedDir();
  const auto env = bench::ReadTestbedEnv(tb);
  if (env.empty()) {
    std::fprintf(stderr, "no testbed at %s: run scripts/testbed/up\n", tb.c_str());
    return 1;
  }
  // SKYSLURM_BENCH_SHIM_BIN measures another shim folder, e.g. an installed
  // package's /usr/libexec/skyslurm/bin (linked dynamically).
  const char* other_shim = std::getenv("SKYSLURM_BENCH_SHIM_BIN");
  const std::string shim_bin = other_shim != nullptr && *other_shim != '\0'
                                   ? std::string(other_shim)
                                   : std::string(SKYSLURM_BINARY_DIR) + "/shim/bin";
  const std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin:/bin";
  char work_template[] = "/tmp/skyslurm-bench-XXXXXX";
  const std::string work = mkdtemp(work_template);
  std::map<std::string, std::vector<std::string>> held;  // cluster -> job ids to cancel
  // On every way out, a failure midway included: the held jobs cancelled,
  // the daemon the routed runs started stopped, the work folder removed.
  struct CleanUp {
    const std::map<std::string, std::vector<std::string>>& held;
    const std::map<std::string, std::string>& env;
    const std::string& work;
    ~CleanUp() {
      for (const auto& [cluster, ids] : held) {
        std::vector<std::string> cancel = {"scancel"};
        cancel.insert(cancel.end(), ids.begin(), ids.end());
        std::string key = "SLURM_CONF_" + cluster;
        for (auto& ch : key) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        (void)runner.Run({.argv = cancel, .env_set = {{"SLURM_CONF", env.at(key)}}});
      }
      bench::StopDaemonOf(work + "/home");
      bench::StopDaemonOf(work + "/home-ssh");
      (void)runner.Run({.argv = {"rm", "-rf", work}});
    }
  } clean_up{held, env, work};

  // 1. Pass-through: the same invocations, alternating, PATH with and
  // without the shim in front.
  const std::vector<std::pair<std::string, std::string>> alpha = {
      {"SLURM_CONF", env.at("SLURM_CONF_ALPHA")}};
  auto with_path = [&](const std::string& p) {
    auto e = alpha;
    e.emplace_back("PATH", p);
    return e;
  };
  std::printf("one process start (fork+exec of /bin/true) on this machine: %.2f ms\n\n",
              bench::ProcessStartMs());
  const std::string real_sbatch = [&] {
    auto w = Time({.argv = {"sh", "-c", "command -v sbatch"}, .env_set = with_path(path)});
    return Trim(w.out.out);
  }();
  const std::string front = std::string(SKYSLURM_BINARY_DIR) + "/bench/exec_front";
  std::printf("Pass-through (no --sky-* option), %d runs each, alternating:\n", passthrough_runs);
  for (const bool submit : {false, true}) {
    std::vector<std::string> args = {"sbatch"};
    if (submit) {
      args.insert(args.end(), {"--hold", "--parsable", "-t", "1", "-o", "/dev/null", "--wrap", "true"});
    } else {
      args.push_back("--version");
    }
    std::vector<double> real, shim, minimal, extra;
    // Named by path: a program is looked up on this process's PATH, not the
    // child's.
    std::vector<std::string> shim_args = args, front_args = args;
    shim_args[0] = shim_bin + "/sbatch";
    front_args[0] = front;
    auto front_env = with_path(path);
    front_env.emplace_back("SKYSLURM_BENCH_REAL", real_sbatch);
    for (int i = 0; i < passthrough_runs; ++i) {
      Timed r = Time({.argv = args, .env_set = with_path(path)});
      Timed s = Time({.argv = shim_args, .env_set = with_path(shim_bin + ":" + path)});
      Timed f = Time({.argv = front_args, .env_set = front_env});
      if (!r.out.success() || !s.out.success() || !f.out.success()) {
        std::fprintf(stderr, "sbatch failed: %s%s%s\n", r.out.err.c_str(), s.out.err.c_str(),
                     f.out.err.c_str());
        return 1;
      }
      if (submit) {
        for (const Timed* t : {&r, &s, &f}) CollectId("alpha", t->out, &held);
      }
      real.push_back(r.ms);
      shim.push_back(s.ms);
      minimal.push_back(f.ms);
      extra.push_back((s.ms - r.ms) * 1000);
    }
    const std::string what = submit ? "sbatch --hold --wrap true (alpha)" : "sbatch --version";
    Line(("real    " + what).c_str(), real);
    Line(("front   " + what).c_str(), minimal);
    Line(("shim    " + what).c_str(), shim);
    std::printf("  shim / minimal static front = %.3f (median; aim <= 1.05)\n",
                Median(shim) / Median(minimal));
    std::printf("  shim / real = %.3f (median); extra per call: median %.0f us\n",
                Median(shim) / Median(real), Median(extra));
  }

  // The client commands' shims (squeue, sacct, scontrol, scancel) on a home
  // job: no routed job involved, so each is the real command after one exec.
  if (!held["alpha"].empty()) {
    const std::string id = held["alpha"].front();
    std::printf("\nClient commands' pass-through (a home job, no routed job), %d runs each:\n",
                passthrough_runs);
    const std::vector<std::vector<std::string>> client = {
        {"squeue", "-h", "-j", id},
        {"sacct", "-P", "-n", "--format=JobIdRaw,State", "-j", id},
        {"scontrol", "show", "job", id},
        {"scancel", "--state=RUNNING", id}};  // held: nothing to cancel
    for (const auto& args : client) {
      std::vector<double> real, shim;
      std::vector<std::string> shim_args = args;
      shim_args[0] = shim_bin + "/" + args[0];
      auto fresh_home = [&](std::vector<std::pair<std::string, std::string>> e) {
        e.emplace_back("HOME", work);  // no routed job of its user's
        return e;
      };
      for (int i = 0; i < passthrough_runs; ++i) {
        Timed r = Time({.argv = args, .env_set = fresh_home(with_path(path))});
        Timed sh =
            Time({.argv = shim_args, .env_set = fresh_home(with_path(shim_bin + ":" + path))});
        if (r.out.exit_code != sh.out.exit_code || r.out.out != sh.out.out) {
          std::fprintf(stderr, "%s: the shim's answer differs: %s / %s\n", args[0].c_str(),
                       r.out.out.c_str(), sh.out.out.c_str());
          return 1;
        }
        real.push_back(r.ms);
        shim.push_back(sh.ms);
      }
      Line(("real    " + args[0]).c_str(), real);
      Line(("shim    " + args[0]).c_str(), shim);
      std::printf("  shim / real = %.3f (median); extra per call: median %.0f us\n",
                  Median(shim) / Median(real), (Median(shim) - Median(real)) * 1000);
    }
  }

  // 2. Routed to a peer, as the ready user types it.
  const std::string home = work + "/home";
  if (!Time({.argv = {"cp", "-a", tb + "/home", home}}).out.success()) return 1;
  bench::ForgetDaemonState(home);
  // The same user reaching gamma through sbatch on the agent (access: ssh).
  const std::string home_ssh = work + "/home-ssh";
  if (!Time({.argv = {"cp", "-a", tb + "/home", home_ssh}}).out.success()) return 1;
  if (!Time({.argv = {"sed", "-i", "/^ *access: rest$/d", home_ssh + "/.config/skyslurm/skyslurm.yaml"}})
           .out.success()) {
    return 1;
  }
  bench::ForgetDaemonState(home_ssh);
  const std::string job = work + "/a100.sh", job_gamma = work + "/a100-gamma.sh";
  std::ofstream(job) << "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 1\n#SBATCH -o /dev/null\ntrue\n";
  // Written for gamma by hand, as a user without skyslurm must (gamma spells
  // its GPUs A100).
  std::ofstream(job_gamma) << "#!/bin/bash\n#SBATCH --gres=gpu:A100:1\n#SBATCH -t 1\n#SBATCH -o /dev/null\ntrue\n";
  std::string script_text;
  {
    std::ifstream in(job_gamma);
    script_text.assign(std::istreambuf_iterator<char>(in), {});
  }
  Command routed{.argv = {shim_bin + "/sbatch", "--sky-any-cluster", "--hold", job},
                 .env_set = {{"HOME", home},
                             {"SLURM_CONF", env.at("SLURM_CONF_ALPHA")},
                             {"PATH", shim_bin + ":" + path},
                             // The cluster on the line, to check and to cancel there.
                             {"SKYSLURM_SUBMIT_OUTPUT", "multi-cluster"}},
                 .env_unset = {"SKYSLURM_CONFIG", "SKYSLURM_SITE_CONFIG", "SKYSLURM_CLUSTERS_FILE",
                               "XDG_CONFIG_HOME", "XDG_STATE_HOME"},
                 .cwd = work};
  Command pinned = routed;
  pinned.argv.insert(pinned.argv.begin() + 1, "--sky-infra=gamma");
  Command routed_ssh = routed;
  routed_ssh.env_set[0].second = home_ssh;
  Command pinned_ssh = pinned;
  pinned_ssh.env_set[0].second = home_ssh;
  // The real sbatch, the shim not on PATH: the plugin hands it over.
  Command through_plugin = routed;
  through_plugin.argv[0] = "sbatch";
  through_plugin.env_set[2].second = path;
  Command ssh{.argv = {"ssh", "-F", tb + "/slurm-config", "-o", "BatchMode=yes", "gamma",
                       "sbatch --hold --parsable"},
              .stdin_data = script_text};
  Command multi{.argv = {"sbatch", "-M", "alpha,beta,gamma", "--hold", job_gamma},
                .env_set = {{"SLURM_CONF", env.at("SLURM_CONF_ALPHA")}}};
  const bool has_dbd = Time({.argv = {"sacctmgr", "-n", "-P", "list", "cluster", "format=cluster"},
                             .env_set = alpha})
                           .out.out.find("gamma") != std::string::npos;

  std::printf("\nTo a peer: an A100 job (only gamma has A100s), %d runs each, alternating:\n",
              routed_runs);
  Timed cold = Time(routed);  // an empty module cache: each cluster's Lmod is asked
  if (!cold.out.success() || cold.out.out.find("on cluster gamma") == std::string::npos) {
    std::fprintf(stderr, "routed sbatch did not land on gamma: %s%s\n", cold.out.out.c_str(),
                 cold.out.err.c_str());
    return 1;
  }
  CollectId("gamma", cold.out, &held);
  Timed cold_ssh = Time(routed_ssh);
  if (!cold_ssh.out.success()) {
    std::fprintf(stderr, "routed sbatch (access: ssh) failed: %s\n", cold_ssh.out.err.c_str());
    return 1;
  }
  CollectId("gamma", cold_ssh.out, &held);
  std::vector<double> sky, pin, plugin, fresh_ssh, dash_m, sky_agent, pin_agent;
  for (int i = 0; i < routed_runs; ++i) {
    Timed s = Time(routed);
    Timed n = Time(pinned);
    Timed p = Time(through_plugin);
    Timed o = Time(ssh);
    Timed sa = Time(routed_ssh);
    Timed na = Time(pinned_ssh);
    if (!s.out.success() || !n.out.success() || !p.out.success() || !o.out.success() ||
        !sa.out.success() || !na.out.success()) {
      std::fprintf(stderr, "submission failed: %s%s%s%s%s%s\n", s.out.err.c_str(),
                   n.out.err.c_str(), p.out.err.c_str(), o.out.err.c_str(), sa.out.err.c_str(),
                   na.out.err.c_str());
      return 1;
    }
    for (const Timed* t : {&s, &n, &p, &o, &sa, &na}) CollectId("gamma", t->out, &held);
    sky.push_back(s.ms);
    pin.push_back(n.ms);
    plugin.push_back(p.ms);
    fresh_ssh.push_back(o.ms);
    sky_agent.push_back(sa.ms);
    pin_agent.push_back(na.ms);
    if (has_dbd) {
      Timed m = Time(multi);
      if (!m.out.success()) {
        std::fprintf(stderr, "sbatch -M failed: %s\n", m.out.err.c_str());
        return 1;
      }
      CollectId("gamma", m.out, &held);
      dash_m.push_back(m.ms);
    }
  }
  std::printf("  %-44s %8.2f ms (empty module cache)\n", "sbatch --sky-any-cluster, first run", cold.ms);
  std::printf("  gamma through slurmrestd (access: rest):\n");
  Line("sbatch --sky-any-cluster (3 clusters)", sky);
  Line("sbatch --sky-infra=gamma (pinned)", pin);
  Line("sbatch --sky-any-cluster, real sbatch (plugin)", plugin);
  std::printf("  gamma through sbatch on the resident agent (access: ssh):\n");
  Line("sbatch --sky-any-cluster (3 clusters)", sky_agent);
  Line("sbatch --sky-infra=gamma (pinned)", pin_agent);
  std::printf("  native:\n");
  Line("fresh `ssh gamma sbatch` (gamma known)", fresh_ssh);
  std::printf("  pinned / fresh ssh = %.3f rest, %.3f ssh (median; aim <= 0.25)\n",
              Median(pin) / Median(fresh_ssh), Median(pin_agent) / Median(fresh_ssh));
  std::printf("  any-cluster / fresh ssh = %.3f rest, %.3f ssh (median)\n",
              Median(sky) / Median(fresh_ssh), Median(sky_agent) / Median(fresh_ssh));
  if (has_dbd) {
    Line("sbatch -M alpha,beta,gamma (slurmdbd)", dash_m);
    std::printf("  any-cluster / sbatch -M = %.3f rest, %.3f ssh (median; aim <= 0.5)\n",
                Median(sky) / Median(dash_m), Median(sky_agent) / Median(dash_m));
    std::printf("  pinned through rest / sbatch -M = %.3f (median; aim <= 0.25)\n",
                Median(pin) / Median(dash_m));
  } else {
    std::printf("  sbatch -M alpha,beta,gamma: skipped (no slurmdbd: scripts/testbed/up --with-dbd)\n");
  }

  return 0;  // the held jobs are cancelled on the way out
}
