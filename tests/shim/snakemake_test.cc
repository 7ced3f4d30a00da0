// Issue 17's proof with a real client: Debian's Snakemake 7.21 runs a
// workflow of 36 one-GPU jobs with dependencies between rules (and a local
// summary) with routing on for the user (SKYSLURM_ANY_CLUSTER=1) and half
// of alpha's GPUs busy. It submits with sbatch, polls with sacct (or its
// status script) and cancels with scancel, all through the shims, knowing
// nothing of skyslurm but the cluster list it asks for: every output is
// there and right, and the jobs ran on more than one cluster. The workflow lives under /tmp, which
// every testbed cluster sees (docs/testbed.md), so its jobs run in place;
// the workflow that reaches epsilon lives under the user's scratch, whose
// copy travels there through the bastion with each job and comes back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "tests/shim/route_fixture.h"

namespace skyslurm::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kSquares = 24;         // rule square: one GPU each
constexpr int kPairs = 12;           // rule pair: one GPU each, two squares in
constexpr int kSumOfSquares = 4324;  // 0² + ... + 23²
// Only the Slurm clusters: Snakemake's job runs `srun` inside its
// allocation (the --slurm executor's job step), which a Kubernetes pod has not.
constexpr char kExtra[] = "slurm_extra=--gpus=1 --sky-any-cluster=alpha,beta,gamma";
const std::string kSkyslurmCli = std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm";

class SnakemakeTest : public RouteTest {
 protected:
  void SetUp() override {
    RouteTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_EQ(Exec({.argv = {"sh", "-c", "command -v snakemake"}}).exit_code, 0)
        << "no snakemake: scripts/install-deps.sh installs Debian's";
    // The user's jobs write here, on whichever cluster they run.
    fs::permissions(tmp_.path(), fs::perms::all);
    workflow_ = WorkflowFolder();
    fs::create_directories(workflow_);
    const std::string data = std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/snakemake/";
    fs::copy_file(data + "Snakefile", workflow_ + "/Snakefile");
    fs::copy_file(data + "sacct-status.sh", workflow_ + "/sacct-status.sh");
    for (const char* folder : {"square", "pair", "slurm-logs"}) {
      fs::create_directories(workflow_ + "/" + folder);
      fs::permissions(workflow_ + "/" + folder, fs::perms::all);
    }
    fs::permissions(workflow_, fs::perms::all);
    // Half of alpha's H100s busy: the workflow's 12 jobs at once do not fit there.
    const std::string filler = Submit(tb_, "alpha",
                                      {"-N1", "--gres=gpu:h100:8", "-t", "15", "-o", "/dev/null",
                                       "-J", "snakemake-filler", "--wrap", "sleep 900"});
    ASSERT_FALSE(filler.empty());
    cleanup_.emplace_back("alpha", filler);
  }
  void TearDown() override {
    // Whatever the workflow left on a cluster (a killed or failed run's jobs).
    for (const std::string& c : clusters_) {
      for (const std::string& id : WorkflowJobs(c)) RunOn(tb_, c, {"scancel", id});
    }
    RouteTest::TearDown();
  }

  // Where the workflow lives: under /tmp, which alpha, beta and gamma see.
  virtual std::string WorkflowFolder() { return tmp_.File("workflow"); }

  // The workflow's jobs live on `cluster` (every job there but the filler
  // and other tests' --wrap jobs): --slurm names them itself, the --cluster
  // runs here "smk-<rule>".
  std::vector<std::string> WorkflowJobs(const std::string& cluster) {
    std::istringstream rows(RunOn(tb_, cluster, {"squeue", "-h", "-o", "%i %j"}).out);
    std::vector<std::string> ids;
    for (std::string id, name; rows >> id >> name;) {
      if (name != "snakemake-filler" && name != "wrap") ids.push_back(id);
    }
    return ids;
  }

  // snakemake with `args` in the workflow's folder, as the user runs it.
  Command SnakemakeCommand(const std::vector<std::string>& args) {
    Command c;
    // umask 0: on the testbed the user's jobs run as root at home (the
    // test's user) and as skyuser1 on the peers (their login), in one
    // folder; a real user is the same user everywhere.
    c.argv = {"sh",        "-c",          "umask 0; exec \"$@\"",
              "sh",        "snakemake",   "--snakefile",
              "Snakefile", "--directory", workflow_,
              "--jobs",    "12",          "--latency-wait",
              "30",        "--config",    extra_};
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    const std::string path = std::getenv("PATH");
    c.env_set = {{"HOME", home_},
                 {"SLURM_CONF", tb_.SlurmConf("alpha")},
                 {"PATH", kShimBin + ":" + path},
                 {"SKYSLURM_ANY_CLUSTER", "1"},
                 {"USER", ::getpwuid(::geteuid())->pw_name},  // as a login sets it
                 // Its generic mode looks at its jobs every 10 s, every
                 // second when CI=true (executors/__init__.py: sleep()).
                 {"CI", "true"}};
    c.env_unset = {"SKYSLURM_CONFIG", "SKYSLURM_SITE_CONFIG", "SKYSLURM_CLUSTERS_FILE",
                   "XDG_CONFIG_HOME", "XDG_STATE_HOME"};
    c.cwd = workflow_;
    c.timeout = std::chrono::seconds(480);
    return c;
  }

  // Every output there and right; the clusters the GPU jobs ran on.
  std::map<std::string, int> CheckOutputs() {
    std::map<std::string, int> where;
    for (int i = 0; i < kSquares; ++i) {
      std::istringstream f(ReadFile(workflow_ + "/square/" + std::to_string(i) + ".txt"));
      std::string index, square, cluster, gpu;
      f >> index >> square >> cluster >> gpu;
      EXPECT_EQ(index + " " + square, std::to_string(i) + " " + std::to_string(i * i));
      EXPECT_NE(gpu, "none") << "square " << i << " on " << cluster << " had no GPU";
      ++where[cluster];
    }
    for (int j = 0; j < kPairs; ++j) {
      std::istringstream f(ReadFile(workflow_ + "/pair/" + std::to_string(j) + ".txt"));
      std::string index, sum, cluster, gpu;
      f >> index >> sum >> cluster >> gpu;
      const int a = 2 * j, b = 2 * j + 1;
      EXPECT_EQ(index + " " + sum, std::to_string(j) + " " + std::to_string(a * a + b * b));
      EXPECT_NE(gpu, "none") << "pair " << j << " on " << cluster << " had no GPU";
      ++where[cluster];
    }
    EXPECT_EQ(ReadFile(workflow_ + "/summary.txt"), std::to_string(kSumOfSquares) + "\n");
    return where;
  }

  static std::string Where(const std::map<std::string, int>& where) {
    std::string text;
    for (const auto& [c, n] : where) text += " " + c + " " + std::to_string(n);
    return text;
  }

  // Snakemake's generic mode: the sbatch line, the status script and the
  // cancel command the user gives it.
  static std::vector<std::string> ClusterMode() {
    return {"--cluster",
            "sbatch --parsable {resources.slurm_extra} -t {resources.runtime} "
            "--mem {resources.mem_mb} -J smk-{rule} -o slurm-logs/%j.out",
            "--cluster-status",
            "./sacct-status.sh",
            "--cluster-cancel",
            "scancel",
            "--max-status-checks-per-second",
            "2",
            "--default-resources",
            "runtime=5",
            "mem_mb=100"};
  }

  // Runs `command` in a thread, its pid known, and sends `signal` once
  // `when` holds (checked every second, up to 300 s): to the program alone
  // (a kill), or to its process group, as a terminal sends Ctrl-C to what
  // runs in it (the program and the commands it is running). Its output.
  enum class To { kProgram, kGroup };
  CommandOutput RunUntil(Command command, const std::function<bool()>& when, int signal, To to) {
    const std::string pid_file = tmp_.File("snakemake.pid");
    fs::remove(pid_file);
    command.argv.insert(command.argv.begin(),
                        {"sh", "-c", "echo $$ > " + pid_file + "; exec \"$@\"", "sh"});
    CommandOutput out;
    std::thread run([&] { out = Exec(command); });
    bool sent = false;
    for (int i = 0; i < 300 && !sent; ++i) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      const int pid = std::atoi(ReadFile(pid_file).c_str());
      // Exec makes the program the leader of a process group of its own.
      if (pid > 0 && when()) sent = ::kill(to == To::kGroup ? -pid : pid, signal) == 0;
    }
    run.join();
    EXPECT_TRUE(sent) << "the condition never held: " << out.err;
    return out;
  }

  int Done(const std::string& folder) {
    int n = 0;
    if (!fs::exists(workflow_ + "/" + folder)) return 0;
    for (const auto& e : fs::directory_iterator(workflow_ + "/" + folder)) {
      n += e.path().extension() == ".txt" && fs::file_size(e.path()) > 0 ? 1 : 0;
    }
    return n;
  }

  // "square 17" from Snakemake's "Job stats" table: how many it ran.
  static int Ran(const std::string& log, const std::string& rule) {
    const auto at = log.rfind("\n" + rule + " ");
    if (at == std::string::npos) return 0;
    return std::atoi(log.c_str() + at + rule.size() + 2);
  }

  std::string workflow_;
  std::string extra_ = kExtra;                                      // --config slurm_extra=...
  std::vector<std::string> clusters_ = {"alpha", "beta", "gamma"};  // where its jobs may go
};

// Snakemake's built-in --slurm executor: `sbatch ... --wrap=...` read by
// the last word of its combined output, `sacct -P -n
// --format=JobIdRaw,State -j <id>` for the state (the answer keyed by the
// id it holds), and inside each job `srun` for the rule's step.
TEST_F(SnakemakeTest, ItsSlurmExecutorRunsTheWorkflowOverTheClusters) {
  const auto started = std::chrono::steady_clock::now();
  // One status check a second: the most its --slurm executor allows (above
  // 1 it checks every 33 s, "not to overstrain the scheduler").
  CommandOutput run = Exec(SnakemakeCommand({"--slurm", "--max-status-checks-per-second", "1",
                                             "--default-resources", "runtime=5", "mem_mb=100"}));
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started)
          .count();
  ASSERT_EQ(run.exit_code, 0) << run.err.substr(run.err.size() > 6000 ? run.err.size() - 6000 : 0);
  const std::map<std::string, int> where = CheckOutputs();
  EXPECT_GE(where.size(), 2u) << Where(where);
  EXPECT_EQ(where.count("none"), 0u) << Where(where);
  std::printf("snakemake --slurm: %d jobs in %lld s, ran on%s\n", kSquares + kPairs,
              static_cast<long long>(seconds), Where(where).c_str());
}

// Snakemake's generic mode (--cluster "sbatch --parsable ...", a status
// script that calls sacct, --cluster-cancel scancel), killed (SIGKILL)
// midway, then run again as its user would (--unlock, --rerun-incomplete):
// it resumes, running only what was not done, and finishes.
TEST_F(SnakemakeTest, ItsClusterModeKilledMidwayResumesAndFinishes) {
  CommandOutput killed = RunUntil(
      SnakemakeCommand(ClusterMode()), [&] { return Done("square") >= 6; }, SIGKILL, To::kProgram);
  EXPECT_EQ(killed.term_signal, SIGKILL) << killed.err;
  const int done_before = Done("square");
  EXPECT_LT(Done("pair"), kPairs);
  ASSERT_EQ(Exec(SnakemakeCommand({"--unlock"})).exit_code, 0);
  std::vector<std::string> again = ClusterMode();
  again.push_back("--rerun-incomplete");
  CommandOutput resumed = Exec(SnakemakeCommand(again));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err.substr(
      resumed.err.size() > 6000 ? resumed.err.size() - 6000 : 0);
  const std::map<std::string, int> where = CheckOutputs();
  EXPECT_GE(where.size(), 2u) << Where(where);
  // What the first run finished was not run again.
  EXPECT_LE(Ran(resumed.err, "square"), kSquares - done_before) << resumed.err;
  EXPECT_EQ(Ran(resumed.err, "pair"), kPairs);
  std::printf(
      "snakemake --cluster: killed with %d squares done; resumed: %d squares, %d pairs; "
      "ran on%s\n",
      done_before, Ran(resumed.err, "square"), Ran(resumed.err, "pair"), Where(where).c_str());
}

// Ctrl-C (SIGINT to snakemake and the sbatch it may be running) while its
// jobs pend and run on several clusters: Snakemake's --cluster-cancel
// scancel, given the ids sbatch printed, cancels each where it is; nothing
// of the workflow is left anywhere. The signal goes once Snakemake has
// submitted all it may (--jobs 12) and its last sbatch has ended: an id
// printed by sbatch but not yet read by Snakemake when Ctrl-C lands is lost
// to it, with Slurm's sbatch as with ours (an sbatch interrupted before
// its answer cancels its job: DaemonTest.SbatchInterruptedWhile...).
TEST_F(SnakemakeTest, CtrlCCancelsItsJobsOnEveryCluster) {
  std::vector<std::string> args = ClusterMode();
  args.insert(args.end(), {"--config", extra_, "hold=300"});
  std::set<std::string> busy;  // the clusters running its jobs when interrupted
  int looks_all_in = 0;        // successive looks (1 s apart) with all 12 queued
  auto spread = [&] {
    busy.clear();
    size_t queued = 0;
    for (const char* c : {"alpha", "beta", "gamma"}) {
      const size_t here = WorkflowJobs(c).size();
      if (here > 0) busy.insert(c);
      queued += here;
    }
    looks_all_in = queued >= 12 ? looks_all_in + 1 : 0;
    return busy.size() >= 2 && looks_all_in >= 3 && Done("square") == 0;
  };
  CommandOutput interrupted = RunUntil(SnakemakeCommand(args), spread, SIGINT, To::kGroup);
  EXPECT_NE(interrupted.exit_code, 0);
  EXPECT_GE(busy.size(), 2u);
  for (const char* c : {"alpha", "beta", "gamma"}) {
    std::vector<std::string> left;
    for (int i = 0; i < 60; ++i) {
      left = WorkflowJobs(c);
      if (left.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    EXPECT_TRUE(left.empty()) << c << " still has " << left.size() << " of its jobs:\n"
                              << RunOn(tb_, c, {"squeue", "-o", "%i %j %T %k %V"}).out
                              << "snakemake said:\n"
                              << interrupted.err.substr(interrupted.err.size() > 5000
                                                            ? interrupted.err.size() - 5000
                                                            : 0);
  }
  EXPECT_EQ(Done("square"), 0);
}

// epsilon (Slurm 24.11, behind a bastion asking for a one-time code) and
// alpha: the user logs in once, then Snakemake's generic mode runs as on one
// cluster. The workflow lives under the user's scratch, which both clusters
// name /scratch/skyuser1: each job there gets the folder's copy (through the
// bastion's session) at the same path, runs Debian 13's Snakemake on the
// node, and what it wrote comes back before sacct says it ended, so the
// next rule finds its inputs wherever it runs.
class SnakemakeOverEpsilonTest : public SnakemakeTest {
 protected:
  void SetUp() override {
    extra_ = "slurm_extra=--gpus=1 --sky-any-cluster=alpha,epsilon";
    clusters_ = {"alpha", "epsilon"};
    SnakemakeTest::SetUp();
    if (HasFatalFailure()) return;
    if (tb_.env.count("SLURM_CONF_EPSILON") == 0) {
      clusters_ = {"alpha"};
      GTEST_SKIP() << "the testbed was brought up without epsilon (SKYSLURM_TESTBED_EPSILON=0)";
    }
    Command login{.argv = {kSkyslurmCli, "login", "epsilon"}, .stdin_data = OneTimeCode(tb_)};
    login.env_set = {{"HOME", home_}, {"SLURM_CONF", tb_.SlurmConf("alpha")}};
    login.env_unset = {"SKYSLURM_CONFIG", "SKYSLURM_SITE_CONFIG", "SKYSLURM_CLUSTERS_FILE",
                       "XDG_CONFIG_HOME", "XDG_STATE_HOME",       "XDG_RUNTIME_DIR"};
    login.timeout = std::chrono::seconds(60);
    CommandOutput out = Exec(login);
    ASSERT_EQ(out.exit_code, 0) << out.err;
  }
  void TearDown() override {
    if (!home_.empty()) {
      Command logout{.argv = {kSkyslurmCli, "logout", "epsilon"}};
      logout.env_set = {{"HOME", home_}};
      logout.env_unset = {"XDG_RUNTIME_DIR"};
      Exec(logout);
    }
    SnakemakeTest::TearDown();
    if (!folder_.empty()) {
      if (clusters_.size() > 1) RunOn(tb_, "epsilon", {"rm", "-rf", folder_});
      fs::remove_all(folder_);
    }
  }
  // Under the scratch root alpha and epsilon both name /scratch/skyuser1.
  std::string WorkflowFolder() override {
    folder_ = "/scratch/skyuser1/snakemake-" + fs::path(tmp_.path()).filename().string();
    fs::create_directories(folder_);
    fs::permissions(folder_, fs::perms::all);
    return folder_ + "/workflow";
  }

  std::string folder_;
};

TEST_F(SnakemakeOverEpsilonTest, ItsClusterModeSpreadsOverAlphaAndEpsilon) {
  Command snakemake = SnakemakeCommand(ClusterMode());
  snakemake.env_unset.push_back("XDG_RUNTIME_DIR");  // the session where login put it
  CommandOutput run = Exec(snakemake);
  ASSERT_EQ(run.exit_code, 0) << run.err.substr(run.err.size() > 6000 ? run.err.size() - 6000 : 0);
  const std::map<std::string, int> where = CheckOutputs();
  EXPECT_GT(where.count("alpha"), 0u) << Where(where);
  EXPECT_GT(where.count("epsilon"), 0u) << Where(where);
  EXPECT_EQ(where.size(), 2u) << Where(where);
  std::printf("snakemake --cluster over alpha and epsilon: ran on%s\n", Where(where).c_str());
}

}  // namespace
}  // namespace skyslurm::testing
