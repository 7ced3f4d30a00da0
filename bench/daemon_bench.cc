// skyslurmd's figures (issue 6), on the testbed (scripts/testbed/up):
//   1. in-memory decision rate: parse + translate + place + the failover
//      decision for a job over the testbed's three clusters as described in
//      tests/data/clusters (no I/O);
//   2. routed-submission throughput into the real clusters with persistence
//      on: N jobs through the daemon's API by C clients at once, every one
//      parsed, placed on live estimates, written to SQLite (WAL) before and
//      after its sbatch, submitted; then the same jobs by native sbatch into
//      the home cluster, as many at once: the clusters' own ceiling;
//   3. pending-migration reaction: alpha busy for 20 min, beta for 30; a
//      managed job pends on alpha; beta frees up: time until it is on beta;
//   4. failover after a cluster death: the job pends on beta; beta's
//      slurmctld stops: time until it is pending elsewhere (default
//      cluster_dead_after, 20 s);
//   5. failover after a cut network: the job pends on beta; the link to
//      beta's login node drops every packet (scripts/testbed/cut) while
//      beta's daemons run on: time until it is pending elsewhere, then the
//      link heals and the stale copy on beta is cancelled.
// Every job it makes is cancelled at the end.
//
//   2b. the same for A100 jobs pinned to gamma, which the ready user reaches
//      through slurmrestd (access: rest), against native sbatch into gamma;
//   2c, 2d. 2 and 2b with every job held (--hold), routed and native: the
//      submission path alone. The testbed's nodes run on this machine's two
//      cores beside the controllers, so jobs that start (and end) during a
//      sweep slow slurmctld's acceptance of the next ones; a site's compute
//      nodes are other machines.
//   2e. issue 16's burst: separate one-GPU jobs of 10 minutes routed to
//      alpha, beta or gamma (48 start, the rest wait in the queues), each
//      cluster through slurmrestd (access: rest; alpha's started by
//      skyslurmd, which runs as skyuser1 for it); the split over the
//      clusters printed job by job; native: the same into alpha.
//   build/bench/daemon_bench [jobs (200)] [clients (16)]
//                            [only: decide|submit|rest|submit-held|rest-held|spread|
//                                   migrate|death|cut]
#include <grp.h>
#include <httplib.h>
#include <json/json.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench/bench_support.h"
#include "broker/backend/backend.h"
#include "broker/daemon/jobs/failover_policy.h"
#include "broker/daemon/jobs/job_input.h"
#include "broker/job/request.h"
#include "broker/place/submission.h"
#include "broker/place/workspace.h"
#include "broker/util/command.h"

namespace {

using namespace skyslurm;
using bench::Clock;
using bench::Ms;

LocalCommandRunner runner;
std::map<std::string, std::string> tb;

const char kScript[] =
    "#!/bin/bash\n#SBATCH --gres=gpu:h100:1\n#SBATCH -t 1\n#SBATCH -J skybench\n"
    "module load cuda/12.1\nsleep 1\n";
// An A100 job: only gamma has A100s (reached through slurmrestd, access: rest).
const char kGammaScript[] =
    "#!/bin/bash\n#SBATCH --gres=gpu:a100:1\n#SBATCH -t 1\n#SBATCH -J skybench\nsleep 1\n";
// A sweep's one-GPU job of any kind (alpha, beta and gamma can run it),
// long enough that only the first 48 start (the testbed's free GPUs) and
// the rest wait in the queues: a burst as a site sees one, with no job
// starting or ending on this machine's cores while it goes in.
const char kAnyGpuScript[] =
    "#!/bin/bash\n#SBATCH --gpus=1\n#SBATCH -t 10\n#SBATCH -J skybench\nsleep 600\n";
// The same written for gamma by hand, for native sbatch there.
const char kGammaNativeScript[] =
    "#!/bin/bash\n#SBATCH --gres=gpu:A100:1\n#SBATCH -t 1\n#SBATCH -J skybench\nsleep 1\n";

// One throughput run: routed submissions through skyslurmd, then the
// clusters' own ceiling in the same run (native sbatch, as many at once).
struct ThroughputCase {
  std::string title;
  std::vector<std::string> args;  // before job.sh
  std::string script;
  std::string native_cluster;
  std::string native_script;
  // Every job (routed and native) held (--hold): in the queue, never
  // started. The testbed's nodes are processes on this machine's cores,
  // beside every controller: jobs starting and ending while the sweep goes
  // in load the same cores that accept it, which a site's compute nodes
  // never do. Held, the figure is the submission path's alone.
  bool held = false;
  // Every cluster reached through slurmrestd (access: rest in the bench
  // user's skyslurm.yaml for alpha and beta too, not only gamma), skyslurmd
  // run as skyuser1 as a user's own command starts it (slurmrestd refuses
  // to run as root), and the whole split printed, job by job: issue 16's
  // burst of separate jobs.
  bool rest_as_user = false;
};

CommandOutput Run(std::vector<std::string> argv,
                  std::vector<std::pair<std::string, std::string>> env = {}) {
  auto r = runner.Run(
      {.argv = std::move(argv), .env_set = std::move(env), .timeout = std::chrono::seconds(120)});
  return r.ok() ? *r : CommandOutput{};
}
CommandOutput On(const std::string& cluster, std::vector<std::string> argv) {
  std::string upper = cluster;
  for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return Run(std::move(argv), {{"SLURM_CONF", tb.at("SLURM_CONF_" + upper)}});
}

void DecisionRate() {
  const std::string data = std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/clusters/";
  const config::Environment env(std::map<std::string, std::string>{{"HOME", "/nonexistent"}});
  auto loaded = config::LoadConfig(env);
  if (!loaded.ok()) return;
  auto ws = place::OpenWorkspace(env, *loaded,
                                 {data + "alpha.yaml", data + "beta.yaml", data + "gamma.yaml"});
  if (!ws.ok()) {
    std::printf("decision rate: %s\n", ws.status().message().c_str());
    return;
  }
  job::RequestInput in;
  in.args = {"--sky-managed", "job.sh"};
  in.script_text = kScript;
  config::FailoverSettings policy;
  const int n = 5000;
  const auto t0 = Clock::now();
  int placed = 0;
  for (int i = 0; i < n; ++i) {
    auto request = job::ParseRequest(in);
    if (!request.ok()) continue;
    place::PlanOptions options;
    options.now = 1'800'000'000 + i;
    options.estimate = false;  // the schedulers' answers are given below
    std::vector<place::ClusterHandle> handles = ws->handles;
    place::Plan plan = place::MakePlan(*request, handles, ws->catalog, ws->home(), options);
    for (std::size_t k = 0; k < plan.candidates.size(); ++k) {
      auto& c = plan.candidates[k];
      if (c.no_estimate != "not estimated") continue;
      c.no_estimate.clear();
      c.start = options.now + static_cast<std::time_t>(60 * k);
    }
    plan.decision = place::Place(plan.candidates, options.policy, options.now);
    if (!plan.decision.chosen || plan.chosen_job() == nullptr) continue;
    backend::SubmitSpec spec = place::SpecFor(*request, *plan.chosen_job(), handles[0],
                                              {.sky_id = "sky-20260101-000000-000000"});
    store::SkyJob job;
    job.state = "PENDING";
    job.cluster = "alpha";
    job.submitted = options.now - 200;
    daemon::Observation seen{
        .now = options.now,
        .cluster_answered = options.now,
        .answered_now = true,
        .queue_read = options.now,
        .copy = backend::JobInfo{.phase = backend::JobPhase::kPending, .state = "PENDING"}};
    (void)daemon::Decide(job, seen, policy);
    placed += spec.sky_id.empty() ? 0 : 1;
  }
  const double s = Ms(Clock::now() - t0) / 1000;
  std::printf(
      "1. in-memory decisions (parse, translate for 3 clusters, place on given estimates,\n"
      "   the submission spec, a failover decision):\n"
      "   %d in %.2f s = %.0f decisions/s (aim >= 2,000/s)\n",
      placed, s, placed / s);
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct Daemon {
  std::string home, socket;
  std::vector<std::pair<std::string, std::string>> env;
  pid_t pid = 0;

  Result<Json::Value> Call(const std::string& method, const std::string& path,
                           const std::string& body = "") {
    httplib::Client c(socket);
    c.set_address_family(AF_UNIX);
    c.set_read_timeout(std::chrono::seconds(120));
    auto r = method == "GET" ? c.Get(path) : c.Post(path, body, "application/json");
    if (!r) return UnavailableError("no answer: " + httplib::to_string(r.error()));
    auto j = daemon::ParseJson(r->body);
    if (!j.ok()) return j.status();
    if (r->status / 100 != 2) return InternalError((*j)["error"].asString());
    return j;
  }
  void Start(const std::vector<std::pair<std::string, std::string>>& policy,
             bool rest_as_user = false) {
    home =
        std::filesystem::temp_directory_path() / ("skyslurm-bench-" + std::to_string(::getpid()));
    std::filesystem::remove_all(home);
    Run({"cp", "-a", bench::TestbedDir() + "/home", home});
    if (rest_as_user) {
      // The ready user's file names gamma's access; alpha's and beta's are
      // added.
      const std::string file = home + "/.config/skyslurm/skyslurm.yaml";
      std::string text = Slurp(file);
      for (std::string_view entry : {"\n  alpha:\n", "\n  beta:\n"}) {
        if (auto at = text.find(entry); at != std::string::npos) {
          text.insert(at + entry.size(), "    access: rest\n");
        }
      }
      std::ofstream(file) << text;
      // skyuser1's key, where skyuser1 can read it.
      const std::string key = home + "/.ssh/skyuser1.key";
      Run({"cp", bench::TestbedDir() + "/keys/skyuser1", key});
      const std::string hosts = home + "/.slurm/config";
      text = Slurp(hosts);
      const std::string from = "IdentityFile " + bench::TestbedDir() + "/keys/skyuser1";
      for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
        text.replace(at, from.size(), "IdentityFile " + key);
      }
      std::ofstream(hosts) << text;
      Run({"chown", "-R", "skyuser1:skyuser1", home});
    }
    std::filesystem::remove_all(home + "/.local/state/skyslurm");  // a fresh daemon
    socket = home + "/.local/state/skyslurm/run/skyslurmd.sock";
    env = {{"HOME", home}, {"SLURM_CONF", tb.at("SLURM_CONF_ALPHA")}};
    env.insert(env.end(), policy.begin(), policy.end());
    pid = ::fork();
    if (pid == 0) {
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      ::unsetenv("XDG_RUNTIME_DIR");
      ::unsetenv("XDG_STATE_HOME");
      const std::string log = home + "/skyslurmd.log";
      std::freopen(log.c_str(), "a", stderr);
      if (rest_as_user) {
        const passwd* pw = ::getpwnam("skyuser1");
        if (pw == nullptr || ::setgroups(0, nullptr) != 0 || ::setgid(pw->pw_gid) != 0 ||
            ::setuid(pw->pw_uid) != 0) {
          ::_exit(126);
        }
      }
      const std::string prog = std::string(SKYSLURM_BINARY_DIR) + "/broker/skyslurmd";
      ::execl(prog.c_str(), prog.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    for (int i = 0; i < 300 && !Call("GET", "/v1/health").ok(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  void LogTail(std::size_t n) {
    std::ifstream log(home + "/skyslurmd.log");
    std::vector<std::string> lines;
    for (std::string line; std::getline(log, line);) lines.push_back(line);
    for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) {
      std::printf("   | %s\n", lines[i].c_str());
    }
  }
  // Says so, with the end of its log, when the daemon died under the load.
  void ReportDeath() {
    int st = 0;
    if (pid <= 0 || ::waitpid(pid, &st, WNOHANG) != pid) return;
    std::printf("   skyslurmd DIED (%s %d); the end of its log:\n",
                WIFSIGNALED(st) ? "signal" : "exit status",
                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    std::ifstream log(home + "/skyslurmd.log");
    std::vector<std::string> lines;
    for (std::string line; std::getline(log, line);) lines.push_back(line);
    for (std::size_t i = lines.size() > 10 ? lines.size() - 10 : 0; i < lines.size(); ++i) {
      std::printf("   | %s\n", lines[i].c_str());
    }
    pid = 0;
  }
  void Stop() {
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      int st = 0;
      ::waitpid(pid, &st, 0);
    }
    std::filesystem::remove_all(home);
  }
  Json::Value Submit(const std::string& sky_id, std::vector<std::string> args,
                     const std::string& script, bool traced = false) {
    daemon::JobInput in{
        .tool = "sbatch", .args = std::move(args), .script = script, .env = {}, .cwd = "/tmp"};
    Json::Value body(Json::objectValue);
    body["sky_id"] = sky_id;
    body["input"] = daemon::ToJson(in);
    body["managed"] = true;
    body["trace"] = traced;
    auto r = Call("POST", "/v1/jobs", daemon::WriteJson(body));
    if (!r.ok()) {
      std::printf("   submit failed: %s\n", r.status().message().c_str());
      return Json::Value();
    }
    if (traced) std::printf("   the trace of %s:\n%s", sky_id.c_str(), (*r)["trace"].asCString());
    return (*r)["job"];
  }
  std::string Where(const std::string& sky_id) {
    auto r = Call("GET", "/v1/jobs/" + sky_id);
    if (!r.ok()) return "";
    const Json::Value& j = (*r)["job"];
    return j["native_id"].asString().empty()
               ? ""
               : j["cluster"].asString() + ":" + j["native_id"].asString();
  }
};

// A managed 4-GPU H100 job that sleeps a minute: fits alpha and beta.
void SubmitSleeper(Daemon& d, const std::string& sky_id) {
  d.Submit(sky_id,
           {"--sky-managed", "--gres=gpu:h100:4", "-t", "5", "-J", "skybench", "-o", "/dev/null",
            "job.sh"},
           "#!/bin/sh\nsleep 60\n");
}

std::string SkyId(int i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "sky-20260101-000000-%06x",
                (static_cast<unsigned>(::getpid()) * 1000u + static_cast<unsigned>(i)) & 0xffffffu);
  return buf;
}

void CancelBenchJobs() {
  for (const char* c : {"alpha", "beta", "gamma"}) On(c, {"scancel", "--name=skybench"});
}

std::vector<std::string> Fill(const std::string& cluster, const std::string& gres, int minutes) {
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    CommandOutput o =
        On(cluster, {"sbatch", "--parsable", "-N1", "--gres=" + gres, "-t", std::to_string(minutes),
                     "-J", "skybench", "-o", "/dev/null", "--wrap", "sleep 900"});
    ids.push_back(o.out.substr(0, o.out.find_first_of(";\n")));
  }
  for (int k = 0; k < 100; ++k) {
    bool running = true;
    for (const auto& id : ids)
      running = running && On(cluster, {"squeue", "-h", "-j", id, "-o", "%T"}).out == "RUNNING\n";
    if (running) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return ids;
}

void Throughput(int jobs, int clients, const ThroughputCase& tc) {
  Daemon d;
  d.Start({}, tc.rest_as_user);
  std::atomic<int> next{0}, ok{0};
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      for (int i; (i = next++) < jobs;) {
        std::vector<std::string> args = {"--sky-managed", "-o", "/dev/null"};
        args.insert(args.end(), tc.args.begin(), tc.args.end());
        if (tc.held) args.push_back("--hold");
        args.push_back("job.sh");
        if (!d.Submit(SkyId(i), args, tc.script, i == jobs / 2).isNull()) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double s = Ms(Clock::now() - t0) / 1000;
  d.ReportDeath();
  if (ok < jobs) d.LogTail(20);
  std::printf("%s, %d clients:\n   %d of %d in %.2f s = %.1f jobs/s sustained (%.0f jobs/day)\n",
              tc.title.c_str(), clients, ok.load(), jobs, s, ok / s, ok / s * 86400);
  std::map<std::string, int> where;
  const int step = tc.rest_as_user ? 1 : std::max(1, jobs / 50);
  for (int i = 0; i < jobs; i += step) {
    const std::string w = d.Where(SkyId(i));
    where[w.substr(0, w.find(':'))]++;
  }
  std::printf(step == 1 ? "   spread (every job):" : "   spread (sampled):");
  for (const auto& [c, n] : where) std::printf(" %s=%d", c.c_str(), n);
  std::printf("\n");
  d.Stop();
  CancelBenchJobs();
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the controllers settle

  // The clusters' own ceiling in the same run: the same jobs by native
  // sbatch into the home cluster, as many at once.
  char script_template[] = "/tmp/skyslurm-bench-job-XXXXXX";
  const int script_fd = ::mkstemp(script_template);
  if (script_fd >= 0) ::close(script_fd);
  const std::string script = script_template;
  std::ofstream(script) << tc.native_script;
  next = 0;
  std::atomic<int> native_ok{0};
  threads.clear();
  const auto n0 = Clock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      for (int i; (i = next++) < jobs;) {
        std::vector<std::string> argv = {"sbatch", "--parsable", "-o", "/dev/null"};
        if (tc.held) argv.push_back("--hold");
        argv.push_back(script);
        if (On(tc.native_cluster, argv).success()) {
          ++native_ok;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const double native_s = Ms(Clock::now() - n0) / 1000;
  std::printf(
      "   native sbatch into %s, the same %d jobs, %d at once: %d in %.2f s = %.1f jobs/s\n"
      "   skyslurmd / native = %.2f\n",
      tc.native_cluster.c_str(), jobs, clients, native_ok.load(), native_s, native_ok / native_s,
      (ok / s) / (native_ok / native_s));
  std::filesystem::remove(script);
  CancelBenchJobs();
}

void Migration() {
  Daemon d;
  d.Start({{"SKYSLURM_POLL_INTERVAL", "1"},
           {"SKYSLURM_MIGRATE_AFTER", "5"},
           {"SKYSLURM_MIGRATE_GAIN", "60"}});
  Fill("alpha", "gpu:h100:8", 20);
  auto beta = Fill("beta", "gpu:nvidia_h100_80gb_hbm3:4", 30);
  const std::string id = SkyId(900001);
  SubmitSleeper(d, id);
  const std::string first = d.Where(id);
  std::this_thread::sleep_for(std::chrono::seconds(6));  // pending past migrate_after
  for (const auto& b : beta) On("beta", {"scancel", b});
  const auto t0 = Clock::now();
  std::string now = first;
  while (Ms(Clock::now() - t0) < 120'000 && now.rfind("beta:", 0) != 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    now = d.Where(id);
  }
  std::printf(
      "3. pending migration (poll 1 s, migrate_after 5 s): %s -> %s %.1f s after beta freed up\n",
      first.c_str(), now.c_str(), Ms(Clock::now() - t0) / 1000);
  d.Stop();
  CancelBenchJobs();
}

// The job pends on beta; `fault` breaks beta (its controller stopped, or
// the link to its login node cut while its daemons run on): the time until
// the job pends elsewhere; then `repair` makes beta whole again.
void FailoverAfter(const char* title, int sky, const std::string& fault, const std::string& repair,
                   const char* after) {
  Daemon d;
  d.Start({{"SKYSLURM_POLL_INTERVAL", "1"}});  // cluster_dead_after: the default 20 s
  Fill("alpha", "gpu:h100:8", 30);
  Fill("beta", "gpu:nvidia_h100_80gb_hbm3:4", 10);
  const std::string id = SkyId(sky);
  SubmitSleeper(d, id);
  const std::string first = d.Where(id);
  const std::string script = std::string(SKYSLURM_SOURCE_DIR) + "/scripts/testbed/";
  Run({script + fault, "beta"});
  const auto t0 = Clock::now();
  std::string now = first;
  while (Ms(Clock::now() - t0) < 120'000 && (now.empty() || now == first)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    now = d.Where(id);
  }
  std::printf("%s (cluster_dead_after 20 s): %s -> %s %.1f s after %s (aim <= 30 s)\n", title,
              first.c_str(), now.c_str(), Ms(Clock::now() - t0) / 1000, after);
  Run({script + repair, "beta"});
  std::this_thread::sleep_for(std::chrono::seconds(3));
  std::ifstream log(d.home + "/skyslurmd.log");
  for (std::string line; std::getline(log, line);) {
    if (line.find(id) != std::string::npos) std::printf("   %s\n", line.c_str());
  }
  d.Stop();
  CancelBenchJobs();
}

}  // namespace

int main(int argc, char** argv) {
  const int jobs = argc > 1 ? std::atoi(argv[1]) : 200;
  const int clients = argc > 2 ? std::atoi(argv[2]) : 16;
  const std::string only = argc > 3 ? argv[3] : "";
  auto want = [&](const char* part) { return only.empty() || only == part; };
  tb = bench::ReadTestbedEnv(bench::TestbedDir());
  std::printf("one process start (fork+exec of /bin/true) on this machine: %.2f ms\n",
              bench::ProcessStartMs());
  if (want("decide")) DecisionRate();
  if (tb.empty()) {
    std::printf("(no testbed: scripts/testbed/up for the rest)\n");
    return 0;
  }
  if (want("submit")) {
    Throughput(jobs, clients,
               {"2. routed submissions into the testbed through skyslurmd (SQLite WAL, intents)",
                {},
                kScript,
                "alpha",
                kScript});
  }
  if (want("rest")) {
    Throughput(jobs, clients,
               {"2b. the same pinned to gamma, reached through slurmrestd (access: rest)",
                {"--sky-infra=gamma"},
                kGammaScript,
                "gamma",
                kGammaNativeScript});
  }
  if (want("submit-held")) {
    Throughput(jobs, clients,
               {"2c. as 2, every job held (--hold): the submission path alone, no job starting "
                "on this machine's cores",
                {},
                kScript,
                "alpha",
                kScript,
                true});
  }
  if (want("rest-held")) {
    Throughput(jobs, clients,
               {"2d. as 2b, every job held (--hold)",
                {"--sky-infra=gamma"},
                kGammaScript,
                "gamma",
                kGammaNativeScript,
                true});
  }
  if (want("spread")) {
    ThroughputCase spread{
        "2e. a sweep of separate one-GPU jobs routed to alpha, beta or gamma (48 GPUs, all "
        "free), each through slurmrestd, skyslurmd as skyuser1",
        {"--sky-any-cluster=alpha,beta,gamma", "--gpus=1"},
        kAnyGpuScript,
        "alpha",
        kAnyGpuScript};
    spread.rest_as_user = true;
    Throughput(jobs, clients, spread);
  }
  if (want("migrate")) Migration();
  if (want("death")) {
    FailoverAfter("4. failover after a cluster death", 900002, "stop-cluster", "start-cluster",
                  "beta's slurmctld stopped");
  }
  if (want("cut")) {
    FailoverAfter("5. failover after a cut network", 900003, "cut", "heal",
                  "the link to beta's login node was cut, its daemons running on");
  }
  return 0;
}
