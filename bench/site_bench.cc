// site_bench: a site's skyslurmd under many users (docs/site.md). Users made
// for it (skybench001 ...) submit held jobs from concurrent clients, each
// an `sbatch` of its own as that user: first natively (`sbatch --hold` into
// alpha), then routed through the shim to the testbed's two site replicas
// (scripts/testbed/site), each request with its MUNGE credential; then
// routed again, replica a killed with SIGKILL halfway through. It prints both
// rates, their ratio, the process-start cost, and what the kill cost: jobs
// lost (accepted, not on alpha), doubled (on alpha twice), refused, and the
// time until every job of the killed replica was held by the other.
//
//   build/bench/site_bench [USERS JOBS CLIENTS]   # default 100 10000 64
//
// Needs root and the testbed (scripts/testbed/up --with-dbd).
#include <fmt/format.h>
#include <pwd.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "broker/util/strings.h"

namespace skyslurm::bench {
namespace {

const std::string kBuild = SKYSLURM_BINARY_DIR;
const std::string kSite = std::string(SKYSLURM_SOURCE_DIR) + "/scripts/testbed/site";
constexpr const char* kLease = "3s";

struct Setup {
  std::string tb;
  std::map<std::string, std::string> env;
  std::vector<std::string> users;
  int jobs = 0;
  int clients = 0;
  std::string tag;
};

CommandOutput Run(const Command& c) {
  LocalCommandRunner runner;
  auto r = runner.Run(c);
  if (r.ok()) return *r;
  CommandOutput failed;
  failed.err = r.status().message();
  return failed;
}

// The bench's users, made when missing (no home: their jobs work in /tmp).
bool MakeUsers(int n, std::vector<std::string>& users) {
  for (int i = 1; i <= n; ++i) {
    const std::string name = fmt::format("skybench{:03}", i);
    if (::getpwnam(name.c_str()) == nullptr &&
        !Run({.argv = {"useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name}})
             .success()) {
      std::fprintf(stderr, "site_bench: cannot make user %s\n", name.c_str());
      return false;
    }
    users.push_back(name);
  }
  return true;
}

// `argv` as `user`, from /tmp, with only what a login gives it.
Command AsUser(const Setup& s, const std::string& user, std::vector<std::string> argv,
               bool routed) {
  Command c{.argv = {"setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups", "--", "env",
                     "-i"}};
  c.argv.push_back("PATH=" + (routed ? kBuild + "/shim/bin:" + kBuild + "/shim:" : std::string()) +
                   "/usr/bin:/bin");
  c.argv.push_back("USER=" + user);
  c.argv.push_back("HOME=/tmp");
  c.argv.push_back("SLURM_CONF=" + s.env.at("SLURM_CONF_ALPHA"));
  if (routed) {
    c.argv.push_back("SKYSLURM_SITE_CONFIG=" + s.tb + "/site/client.yaml");
    c.argv.push_back("SKYSLURM_MUNGE_SOCKET=" + s.tb + "/munge/munge.socket");
  }
  c.argv.insert(c.argv.end(), argv.begin(), argv.end());
  c.cwd = "/tmp";
  c.timeout = std::chrono::minutes(5);
  return c;
}

struct Sweep {
  double seconds = 0;
  int accepted = 0;
  std::vector<bool> ok;  // per job
  Clock::time_point killed_at{};
};

// JOBS held jobs named `prefix`-<i>, from CLIENTS threads, users in turn;
// `at_half` runs once when half the jobs have been handed out.
Sweep RunSweep(const Setup& s, const std::string& prefix, bool routed,
               const std::function<void()>& at_half) {
  Sweep sweep;
  sweep.ok.assign(static_cast<std::size_t>(s.jobs), false);
  std::atomic<int> next{0};
  std::atomic<bool> halfway{false};
  std::mutex mu;
  std::thread killer;
  const auto t0 = Clock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < s.clients; ++c) {
    clients.emplace_back([&] {
      for (int i = next++; i < s.jobs; i = next++) {
        if (i == s.jobs / 2 && at_half && !halfway.exchange(true)) {
          // Apart from the clients: none waits for it.
          sweep.killed_at = Clock::now();
          killer = std::thread(at_half);
        }
        const std::string& user = s.users[static_cast<std::size_t>(i) % s.users.size()];
        std::vector<std::string> argv = {"sbatch"};
        if (routed) argv.push_back("--sky-any-cluster");
        argv.insert(argv.end(), {"--hold", "-J", fmt::format("{}-{}", prefix, i), "-t", "5", "-o",
                                 "/dev/null", "--wrap", "true"});
        const bool ok = Run(AsUser(s, user, argv, routed)).success();
        std::lock_guard lock(mu);
        sweep.ok[static_cast<std::size_t>(i)] = ok;
        sweep.accepted += ok ? 1 : 0;
      }
    });
  }
  for (auto& t : clients) t.join();
  if (killer.joinable()) killer.join();
  sweep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return sweep;
}

// How many jobs on alpha carry each name of `prefix`-<i>.
std::map<int, int> OnAlpha(const Setup& s, const std::string& prefix) {
  Command q{.argv = {"squeue", "-h", "-a", "-t", "all", "-o", "%j"}};
  q.env_set = {{"SLURM_CONF", s.env.at("SLURM_CONF_ALPHA")}};
  std::map<int, int> count;
  for (const std::string& name : SplitList(Run(q).out, '\n')) {
    if (!name.starts_with(prefix + "-")) continue;
    ++count[static_cast<int>(LeadingInt(name.substr(prefix.size() + 1)))];
  }
  return count;
}

void CancelBenchJobs(const Setup& s) {
  for (const std::string& user : s.users) {
    Command c{.argv = {"scancel", "-u", user}};
    c.env_set = {{"SLURM_CONF", s.env.at("SLURM_CONF_ALPHA")}};
    (void)Run(c);
  }
}

// Live jobs whose lease `replica` still holds (psql on the site's database).
long HeldBy(const Setup& s, const std::string& replica) {
  const std::string url = s.env.at("SKYSLURM_POSTGRES_URL");
  const std::string site_url =
      url.substr(0, url.find("/postgres?")) + "/skyslurm_site" + url.substr(url.find('?'));
  CommandOutput out =
      Run({.argv = {"psql", "-tA", site_url, "-c",
                    fmt::format("SELECT count(*) FROM jobs WHERE lease_owner='{}' AND lease_until "
                                ">= (extract(epoch from clock_timestamp())*1000)::bigint AND "
                                "state IN ('SUBMITTING','PENDING','RUNNING')",
                                replica)}});
  return static_cast<long>(LeadingInt(Trim(out.out)));
}

int Main(int argc, char** argv) {
  Setup s;
  const int users = argc > 1 ? std::atoi(argv[1]) : 100;
  s.jobs = argc > 2 ? std::atoi(argv[2]) : 10000;
  s.clients = argc > 3 ? std::atoi(argv[3]) : 64;
  if (users <= 0 || s.jobs <= 1 || s.clients <= 0) {
    std::fprintf(stderr, "usage: site_bench [USERS JOBS CLIENTS]\n");
    return 2;
  }
  s.tb = TestbedDir();
  s.env = ReadTestbedEnv(s.tb);
  if (!s.env.contains("SLURM_CONF_ALPHA") || !s.env.contains("SKYSLURM_POSTGRES_URL")) {
    std::fprintf(stderr, "site_bench: no testbed with PostgreSQL in %s\n", s.tb.c_str());
    return 1;
  }
  if (!MakeUsers(users, s.users)) return 1;
  if (!Run({.argv = {kSite, "up", kBuild, kLease}, .timeout = std::chrono::minutes(2)}).success()) {
    std::fprintf(stderr, "site_bench: scripts/testbed/site up failed\n");
    return 1;
  }
  s.tag = std::to_string(::getpid());
  const double start_ms = ProcessStartMs();
  std::printf("site_bench: %d users, %d held jobs, %d clients; process start %.2f ms\n", users,
              s.jobs, s.clients, start_ms);

  const std::string native_prefix = "nat" + s.tag;
  const Sweep native = RunSweep(s, native_prefix, false, nullptr);
  const std::map<int, int> native_on = OnAlpha(s, native_prefix);
  CancelBenchJobs(s);
  std::printf("native sbatch --hold:   %5d/%d accepted in %6.1f s: %7.1f jobs/s\n", native.accepted,
              s.jobs, native.seconds, native.accepted / native.seconds);

  const std::string steady_prefix = "sky" + s.tag;
  const Sweep steady = RunSweep(s, steady_prefix, true, nullptr);
  const std::map<int, int> steady_on = OnAlpha(s, steady_prefix);
  CancelBenchJobs(s);
  int steady_doubled = 0, steady_lost = 0;
  for (int i = 0; i < s.jobs; ++i) {
    const int n = steady_on.contains(i) ? steady_on.at(i) : 0;
    steady_doubled += n > 1 ? 1 : 0;
    steady_lost += steady.ok[static_cast<std::size_t>(i)] && n == 0 ? 1 : 0;
  }
  std::printf(
      "routed, two replicas:   %5d/%d accepted in %6.1f s: %7.1f jobs/s (%.2f x native); "
      "%d lost, %d doubled\n",
      steady.accepted, s.jobs, steady.seconds, steady.accepted / steady.seconds,
      (steady.accepted / steady.seconds) / (native.accepted / native.seconds), steady_lost,
      steady_doubled);

  const std::string sky_prefix = "kill" + s.tag;
  const Sweep routed = RunSweep(s, sky_prefix, true, [] {
    (void)Run({.argv = {kSite, "kill", "a"}});
  });
  // Until the killed replica holds nothing: its jobs are the other's.
  double takeover_s = -1;
  for (int i = 0; i < 600; ++i) {
    if (HeldBy(s, "replica-a") == 0) {
      takeover_s = std::chrono::duration<double>(Clock::now() - routed.killed_at).count();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::seconds(4));  // what b finishes for a lands
  const std::map<int, int> on = OnAlpha(s, sky_prefix);
  int lost = 0, doubled = 0, refused_ran = 0;
  for (int i = 0; i < s.jobs; ++i) {
    const int n = on.contains(i) ? on.at(i) : 0;
    if (routed.ok[static_cast<std::size_t>(i)] && n == 0) ++lost;
    if (n > 1) ++doubled;
    if (!routed.ok[static_cast<std::size_t>(i)] && n > 0) ++refused_ran;
  }
  std::printf("routed, a killed halfway: %5d/%d accepted in %6.1f s: %7.1f jobs/s\n",
              routed.accepted, s.jobs, routed.seconds, routed.accepted / routed.seconds);
  std::printf(
      "replica a killed -9 halfway: %d lost, %d doubled, %d refused (%d of those ran), "
      "its jobs taken over %.1f s after the kill (lease %s)\n",
      lost, doubled, s.jobs - routed.accepted, refused_ran, takeover_s, kLease);
  std::printf("native jobs doubled: %zu\n", static_cast<std::size_t>(std::count_if(
                                                native_on.begin(), native_on.end(),
                                                [](const auto& kv) { return kv.second > 1; })));
  CancelBenchJobs(s);
  (void)Run({.argv = {kSite, "down"}});
  return lost + doubled + steady_lost + steady_doubled == 0 ? 0 : 1;
}

}  // namespace
}  // namespace skyslurm::bench

int main(int argc, char** argv) { return skyslurm::bench::Main(argc, argv); }
