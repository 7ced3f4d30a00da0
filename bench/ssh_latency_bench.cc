// Command latency to a login node, three ways, measured in one run against
// the testbed (scripts/testbed/up): a command on a pooled libssh session, on
// a fresh libssh connection, and with a fresh `ssh login cmd`; then
// a pooled command printing 200 KB; then `skyslurm gpus` over the three
// clusters against three plain `sinfo`s.
//
//   build/bench/ssh_latency_bench [runs]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "broker/config/ssh_config.h"
#include "broker/ssh/session_pool.h"
#include "broker/util/command.h"

namespace {

using namespace skyslurm;
using bench::Clock;
using bench::Median;
using bench::Ms;

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 30;
  const std::string tb = bench::TestbedDir();
  auto hosts = config::ReadSshConfig(tb + "/slurm-config", {"/root", "root"});
  if (!hosts.ok() || hosts->empty()) {
    std::fprintf(stderr, "testbed not up? %s\n", hosts.ok() ? "no hosts" : hosts.status().message().c_str());
    return 1;
  }
  ssh::SshTarget beta;
  for (const auto& h : *hosts) {
    if (h.name == "beta") beta = ssh::TargetFromConfig(h);
  }
  const Command cmd{.argv = {"sinfo", "-h", "-o", "%P"}};
  LocalCommandRunner local;

  ssh::SessionPool pool(beta);
  (void)pool.Run(cmd);  // warm
  std::vector<double> pooled, fresh, openssh;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    auto r = pool.Run(cmd);
    pooled.push_back(Ms(Clock::now() - t0));
    if (!r.ok()) std::fprintf(stderr, "pooled: %s\n", r.status().message().c_str());

    t0 = Clock::now();
    ssh::SessionPool once(beta);
    auto f = once.Run(cmd);
    fresh.push_back(Ms(Clock::now() - t0));
    if (!f.ok()) std::fprintf(stderr, "fresh: %s\n", f.status().message().c_str());

    t0 = Clock::now();
    auto o = local.Run({.argv = {"ssh", "-F", tb + "/slurm-config", "-o", "BatchMode=yes", "beta",
                                 "sinfo -h -o %P"}});
    openssh.push_back(Ms(Clock::now() - t0));
    if (!o.ok() || !o->success()) std::fprintf(stderr, "ssh failed\n");
  }
  std::printf("login-node command (sinfo on beta), median of %d:\n", runs);
  std::printf("  pooled libssh session     %8.2f ms\n", Median(pooled));
  std::printf("  fresh libssh connection   %8.2f ms\n", Median(fresh));
  std::printf("  fresh `ssh beta cmd`      %8.2f ms\n", Median(openssh));
  std::printf("  pooled / fresh ssh = %.3f   (pool is %.0fx faster)\n",
              Median(pooled) / Median(openssh), Median(openssh) / Median(pooled));

  // Output larger than libssh's buffers (an squeue --json of a busy cluster):
  // the worst run shows any stall waiting for the rest (once 1 s in 3 runs).
  std::vector<double> large;
  const Command big{.argv = {"sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x"}};
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    auto r = pool.Run(big);
    large.push_back(Ms(Clock::now() - t0));
    if (!r.ok() || r->out.size() != 200000) std::fprintf(stderr, "large output: incomplete\n");
  }
  std::printf("  pooled, 200 KB of output  %8.2f ms median, %.2f ms worst of %d\n", Median(large),
              bench::Quantile(large, 1.0), runs);

  // skyslurm gpus over the three clusters against three plain sinfo calls.
  const auto env = bench::ReadTestbedEnv(tb);
  const std::string cfg = "/tmp/skyslurm-bench-config.yaml";
  std::ofstream(cfg) << "home: alpha\nclusters:\n  alpha:\n    modulepath: " << tb << "/modules/alpha\n";
  const std::string skyslurm = std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm";
  std::vector<double> gpus, native;
  for (int i = 0; i < std::max(5, runs / 3); ++i) {
    auto t0 = Clock::now();
    auto g = local.Run({.argv = {skyslurm, "gpus"},
                        .env_set = {{"SKYSLURM_CONFIG", cfg},
                                    {"SKYSLURM_SITE_CONFIG", "/nonexistent"},
                                    {"SKYSLURM_CLUSTERS_FILE", tb + "/slurm-config"},
                                    {"SLURM_CONF", env.at("SLURM_CONF_ALPHA")}}});
    gpus.push_back(Ms(Clock::now() - t0));
    if (!g.ok() || !g->success()) std::fprintf(stderr, "skyslurm gpus failed: %s\n", g.ok() ? g->err.c_str() : "");
    t0 = Clock::now();
    for (const char* c : {"ALPHA", "BETA", "GAMMA"}) {
      (void)local.Run({.argv = {"sinfo"}, .env_set = {{"SLURM_CONF", env.at(std::string("SLURM_CONF_") + c)}}});
    }
    native.push_back(Ms(Clock::now() - t0));
  }
  std::printf("skyslurm gpus over 3 clusters (2 over SSH, cold): median %.1f ms; three local sinfo: "
              "%.1f ms (ratio %.1f)\n",
              Median(gpus), Median(native), Median(gpus) / Median(native));
  return 0;
}
