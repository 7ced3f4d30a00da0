// What a job's folder costs when it travels to a peer (issue 14): a routed
// sbatch to beta from a project folder (the daemon measures it, copies it
// with rsync over the user's SSH settings, submits in it), against the same
// submission copying nothing (--sky-workdir=none), and against what a user
// does by hand without skyslurm: `rsync -a proj/ beta:proj/` then
// `ssh beta 'cd proj && sbatch ...'`. Runs alternate; the folder is
// unchanged after the first copy, so each copy sends nothing new (the
// common case: resubmitting from a project). The first, full copy is
// timed on its own.
//
//   build/bench/folder_bench [runs=15] [files=200] [kib_per_file=16]
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "broker/util/command.h"
#include "broker/util/strings.h"

namespace skyslurm {
namespace {

using bench::Clock;
using bench::Median;
using bench::Ms;

LocalCommandRunner runner;

using bench::Timed;
Timed Time(const Command& c) { return bench::TimeRun(runner, c); }

void Line(const char* what, const std::vector<double>& v) {
  std::printf("  %-52s median %8.1f ms   p90 %8.1f ms\n", what, Median(v),
              bench::Quantile(v, 0.9));
}

}  // namespace
}  // namespace skyslurm

int main(int argc, char** argv) {
  using namespace skyslurm;
  const int runs = argc > 1 ? std::atoi(argv[1]) : 15;
  const int files = argc > 2 ? std::atoi(argv[2]) : 200;
  const int kib = argc > 3 ? std::atoi(argv[3]) : 16;
  const std::string tb = bench::TestbedDir();
  const auto env = bench::ReadTestbedEnv(tb);
  if (env.empty()) {
    std::fprintf(stderr, "no testbed at %s: run scripts/testbed/up\n", tb.c_str());
    return 1;
  }
  char work_template[] = "/tmp/skyslurm-folder-bench-XXXXXX";
  const std::string work = mkdtemp(work_template);
  const std::string home = work + "/home";
  const std::string leaf = std::filesystem::path(work).filename().string();
  const std::string proj = home + "/" + leaf;
  std::vector<std::string> held;  // beta's job ids
  struct CleanUp {
    const std::vector<std::string>& held;
    const std::map<std::string, std::string>& env;
    const std::string& work;
    const std::string& tb;
    const std::string& leaf;
    ~CleanUp() {
      if (!held.empty()) {
        std::vector<std::string> cancel = {"scancel"};
        cancel.insert(cancel.end(), held.begin(), held.end());
        (void)runner.Run({.argv = cancel, .env_set = {{"SLURM_CONF", env.at("SLURM_CONF_BETA")}}});
      }
      bench::StopDaemonOf(work + "/home");
      (void)runner.Run({.argv = {"ssh", "-F", tb + "/slurm-config", "-o", "BatchMode=yes", "beta",
                                 "rm -rf ~/" + leaf + " ~/by-hand-" + leaf}});
      (void)runner.Run({.argv = {"rm", "-rf", work}});
    }
  } clean_up{held, env, work, tb, leaf};

  std::printf("one process start (fork+exec of /bin/true) on this machine: %.2f ms\n",
              bench::ProcessStartMs());
  // The ready user's home, its alpha home root this copy (so ~/<leaf> is
  // /home/skyuser1/<leaf> on beta), and a project of `files` files.
  if (!Time({.argv = {"cp", "-a", tb + "/home", home}}).out.success()) return 1;
  bench::ForgetDaemonState(home);
  {
    const std::string yaml = home + "/.config/skyslurm/skyslurm.yaml";
    std::ifstream in(yaml);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string root = "home: " + tb + "/home,";
    if (text.find(root) != std::string::npos) {
      text.replace(text.find(root), root.size(), "home: " + home + ",");
    }
    std::ofstream(yaml) << text;
  }
  std::filesystem::create_directories(proj + "/data");
  std::uint32_t x = 2463534242u;
  for (int i = 0; i < files; ++i) {
    std::string bytes(static_cast<std::size_t>(kib) << 10, '\0');
    for (char& c : bytes) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      c = static_cast<char>(x);
    }
    std::ofstream(fmt::format("{}/data/part-{:04}.bin", proj, i)) << bytes;
  }
  std::printf("the project: %d files of %d KiB (%.1f MiB), submitted to beta (--sky-infra=beta)\n\n",
              files, kib, files * kib / 1024.0);

  const std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin:/bin";
  const std::vector<std::pair<std::string, std::string>> user = {
      {"HOME", home},
      {"SLURM_CONF", env.at("SLURM_CONF_ALPHA")},
      {"PATH", std::string(SKYSLURM_BINARY_DIR) + "/shim/bin:" + path}};
  const std::vector<std::string> job = {"--hold", "--parsable", "-t", "1", "-o", "/dev/null",
                                        "--wrap", "true"};
  auto routed = [&](bool copy) {
    Command c;
    c.argv = {std::string(SKYSLURM_BINARY_DIR) + "/shim/bin/sbatch", "--sky-infra=beta"};
    if (!copy) c.argv.push_back("--sky-workdir=none");
    c.argv.insert(c.argv.end(), job.begin(), job.end());
    c.env_set = user;
    c.env_unset = {"SKYSLURM_CONFIG", "SKYSLURM_SITE_CONFIG", "SKYSLURM_CLUSTERS_FILE",
                   "XDG_CONFIG_HOME", "XDG_STATE_HOME"};
    c.cwd = proj;
    return c;
  };
  const std::string ssh_config = tb + "/slurm-config";
  const std::string by_hand = "~/by-hand-" + leaf;
  auto rsync_by_hand = [&] {
    return Command{.argv = {"rsync", "-rlpt", "-e", "ssh -F " + ssh_config + " -o BatchMode=yes",
                            proj + "/", "beta:" + by_hand + "/"}};
  };
  auto sbatch_by_hand = [&] {
    return Command{.argv = {"ssh", "-F", ssh_config, "-o", "BatchMode=yes", "beta",
                            "cd " + by_hand + " && sbatch " + ShellJoin(job)}};
  };
  auto keep = [&](const CommandOutput& out) {
    const std::string id = Trim(out.out.substr(0, out.out.find_first_of(";\n")));
    if (!id.empty()) held.push_back(id);
  };

  // The daemon up, then the first (full) copies, each way.
  if (!Time(routed(false)).out.success()) {
    std::fprintf(stderr, "a routed sbatch failed\n");
    return 1;
  }
  Timed first = Time(routed(true));
  Timed first_hand = Time(rsync_by_hand());
  if (!first.out.success() || !first_hand.out.success()) {
    std::fprintf(stderr, "the first copy failed: %s%s\n", first.out.err.c_str(),
                 first_hand.out.err.c_str());
    return 1;
  }
  keep(first.out);
  std::printf("The first, full copy:\n");
  std::printf("  %-52s %8.1f ms\n", "sbatch --sky-infra=beta (skyslurmd copies, submits)",
              first.ms);
  std::printf("  %-52s %8.1f ms\n\n", "rsync -rlpt proj/ beta:proj/ (by hand, copy only)",
              first_hand.ms);

  std::vector<double> copying, not_copying, hand, copy_extra;
  for (int i = 0; i < runs; ++i) {
    Timed a = Time(routed(true));
    Timed b = Time(routed(false));
    const auto t0 = Clock::now();
    Timed r = Time(rsync_by_hand());
    Timed s = Time(sbatch_by_hand());
    const double h = Ms(Clock::now() - t0);
    if (!a.out.success() || !b.out.success() || !r.out.success() || !s.out.success()) {
      std::fprintf(stderr, "a run failed: %s%s%s%s\n", a.out.err.c_str(), b.out.err.c_str(),
                   r.out.err.c_str(), s.out.err.c_str());
      return 1;
    }
    for (const Timed* t : {&a, &b, &s}) keep(t->out);
    copying.push_back(a.ms);
    not_copying.push_back(b.ms);
    hand.push_back(h);
    copy_extra.push_back(a.ms - b.ms);
  }
  std::printf("Resubmitting from the unchanged project, %d runs each, alternating:\n", runs);
  Line("sbatch --sky-infra=beta (folder copied)", copying);
  Line("sbatch --sky-infra=beta --sky-workdir=none", not_copying);
  Line("by hand: rsync, then ssh beta 'cd proj && sbatch'", hand);
  std::printf("  the copy's own cost (copied - none): median %.1f ms\n", Median(copy_extra));
  std::printf("  folder copied / by hand = %.3f (median)\n", Median(copying) / Median(hand));
  return 0;
}
