#include "tests/support/testbed.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "broker/config/ssh_config.h"
#include "broker/job/global_id.h"

namespace skyslurm::testing {
namespace fs = std::filesystem;

std::string Testbed::SlurmConf(std::string_view cluster) const {
  std::string key = "SLURM_CONF_";
  for (char c : cluster) key += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto it = env.find(key);
  return it == env.end() ? std::string() : it->second;
}

std::string Testbed::LoginHost(std::string_view cluster) const {
  std::string key = "SKYSLURM_LOGIN_HOST_";
  for (char c : cluster) key += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto it = env.find(key);
  return it == env.end() ? std::string("127.0.0.1") : it->second;
}

std::string Testbed::LoginSlurmConf(std::string_view cluster) const {
  std::string key = "SKYSLURM_LOGIN_SLURM_CONF_";
  for (char c : cluster) key += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto it = env.find(key);
  return it == env.end() ? SlurmConf(cluster) : it->second;
}

std::string Testbed::Path(std::string_view relative) const {
  return dir + "/" + std::string(relative);
}

Result<Testbed> LoadTestbed() {
  const char* from_env = std::getenv("SKYSLURM_TESTBED_DIR");
  Testbed tb;
  tb.dir = (from_env != nullptr && *from_env != '\0') ? from_env : "/tmp/skyslurm-testbed";
  std::ifstream in(tb.dir + "/env");
  if (!in) {
    return FailedPreconditionError("the testbed is not up (no " + tb.dir +
                                   "/env): run scripts/testbed/up as root");
  }
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("export ")) continue;
    line.erase(0, 7);
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    tb.env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  for (const char* cluster : kClusters) {
    if (tb.SlurmConf(cluster).empty()) {
      return FailedPreconditionError(tb.dir + "/env names no SLURM_CONF for " + cluster);
    }
  }
  return tb;
}

std::string TestbedScript(std::string_view name) {
  return std::string(SKYSLURM_SOURCE_DIR) + "/scripts/testbed/" + std::string(name);
}

CommandOutput Exec(Command command) {
  LocalCommandRunner runner;
  auto result = runner.Run(command);
  if (!result.ok()) {
    ADD_FAILURE() << "running " << ShellJoin(command.argv) << ": " << result.status().message();
    return {};
  }
  return std::move(result).value();
}

CommandOutput RunOn(const Testbed& tb, std::string_view cluster, std::vector<std::string> argv,
                    std::chrono::seconds timeout) {
  Command command;
  if (cluster == kSecondReleaseCluster) {
    // Slurm 24.11: its own clients, in its namespaces (scripts/testbed/epsilon).
    command.argv = {TestbedScript("epsilon"), "run"};
    command.argv.insert(command.argv.end(), argv.begin(), argv.end());
  } else {
    command.argv = std::move(argv);
    command.env_set = {{"SLURM_CONF", tb.SlurmConf(cluster)}};
  }
  command.timeout = timeout;
  return Exec(std::move(command));
}

CommandOutput SshAsUser(const Testbed& tb, std::string_view cluster,
                        const std::string& remote_command, std::chrono::seconds timeout) {
  Command command;
  command.argv = {"ssh",           "-F", tb.Path("slurm-config"), "-o",
                  "BatchMode=yes", "-o", "ConnectTimeout=10",     std::string(cluster),
                  remote_command};
  command.timeout = timeout;
  return Exec(std::move(command));
}

std::string ReadOnCluster(const Testbed& tb, std::string_view cluster, const std::string& path,
                          std::chrono::seconds timeout) {
  if (cluster == kSecondReleaseCluster) {
    // Behind a bastion asking for a code: read where this machine keeps
    // epsilon's /home and /scratch.
    // /home and /scratch are $TB/fs/epsilon/home and .../scratch.
    std::string here = path;
    if (path.starts_with("/home/") || path.starts_with("/scratch/")) {
      here = tb.Path("fs/epsilon" + path);
    } else if (!path.starts_with("/")) {
      here = tb.Path("fs/epsilon/home/skyuser1/" + path);
    }
    return ReadFileWhenReady(here, timeout);
  }
  const std::string quoted = "'" + std::regex_replace(path, std::regex("'"), "'\\''") + "'";
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  CommandOutput out;
  do {
    out = SshAsUser(tb, cluster, "test -s " + quoted + " && cat " + quoted);
    if (out.success()) return out.out;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (std::chrono::steady_clock::now() < deadline);
  ADD_FAILURE() << "no " << path << " on " << cluster << ": " << out.err;
  return "";
}

std::string Submit(const Testbed& tb, std::string_view cluster,
                   const std::vector<std::string>& sbatch_args) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), sbatch_args.begin(), sbatch_args.end());
  CommandOutput out = RunOn(tb, cluster, argv);
  if (!out.success()) {
    ADD_FAILURE() << "sbatch on " << cluster << " failed (" << out.DescribeEnd()
                  << "): " << out.err;
    return {};
  }
  std::string id = out.out.substr(0, out.out.find_first_of(";\n"));
  if (id.empty() || !std::all_of(id.begin(), id.end(), ::isdigit)) {
    ADD_FAILURE() << "sbatch --parsable printed no job id: '" << out.out << "'";
    return {};
  }
  return id;
}

std::vector<std::string> FillAlphaH100s(const Testbed& tb) {
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    const std::string id =
        Submit(tb, "alpha",
               {"-N1", "--gres=gpu:h100:8", "-t", "20", "-o", "/dev/null", "--wrap", "sleep 600"});
    if (id.empty()) return ids;
    ids.push_back(id);
    for (int k = 0; k < 150 && JobState(tb, "alpha", id) != "RUNNING"; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return ids;
}

std::string OneTimeCode(const Testbed& tb, const std::string& user) {
  const std::string used_file = tb.Path("otp/" + user + ".last-step");
  // One test at a time takes a step: the file is locked while it does.
  const int lock = ::open((used_file + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (lock >= 0) ::flock(lock, LOCK_EX);
  long long last = 0;
  std::ifstream(used_file) >> last;
  long long step = 0;
  for (;;) {
    const long long now = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count() /
                          30;
    step = std::max(now, last + 1);
    if (step <= now + 3) break;
    std::this_thread::sleep_for(std::chrono::seconds(5));
  }
  std::ofstream(used_file) << step << "\n";
  if (lock >= 0) ::close(lock);
  // The secret on stdin ("-"), never in a process's arguments.
  CommandOutput code =
      Exec({.argv = {"oathtool", "--totp", "-N", "@" + std::to_string(step * 30 + 1), "-"},
            .stdin_data = ReadFile(tb.Path("otp/" + user))});
  EXPECT_EQ(code.exit_code, 0) << code.err;
  return code.out;  // six digits and a newline
}

std::pair<std::string, std::string> ClusterJobOf(std::string_view global_id) {
  const auto word = SplitJobIdWord(global_id);
  const DecodedId d = word ? DecodeGlobalId(word->number) : DecodedId{};
  for (const char* name : {"alpha", "beta", "gamma", "delta", "epsilon", "kappa"}) {
    if (d.index != 0 && DefaultClusterIndex(name) == d.index)
      return {name, std::to_string(d.local)};
  }
  return {};
}

std::pair<std::string, std::string> RoutedTo(const CommandOutput& out) {
  std::smatch m;
  if (!std::regex_match(
          out.out, m,
          std::regex("(?:Submitted batch job )?([0-9]+)(?:(?: on cluster |;)([a-z]+))?\n"))) {
    ADD_FAILURE() << "not a routed submission: stdout '" << out.out << "', stderr '" << out.err
                  << "'";
    return {};
  }
  auto named = ClusterJobOf(m[1].str());
  if (named.first.empty() || (m[2].matched && m[2].str() != named.first)) {
    ADD_FAILURE() << "not a global id of the testbed's clusters: '" << out.out << "'";
    return {};
  }
  return named;
}

std::string LocalClustersConfig(const Testbed& tb) {
  std::string yaml = "home: alpha\nclusters:\n";
  for (const char* c : kClusters) {
    yaml += fmt::format("  {}:\n    slurm_conf: {}\n    modulepath: {}/modules/{}\n", c,
                        tb.SlurmConf(c), tb.dir, c);
  }
  return yaml + "  gamma:\n    modules: {cuda: CUDA}\n";
}

Command ExplainCommand(const std::string& config, const std::string& dir,
                       const std::vector<std::string>& args) {
  Command c;
  c.argv = {std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm", "explain"};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  c.env_set = {{"SKYSLURM_CONFIG", config},
               {"SKYSLURM_SITE_CONFIG", "/nonexistent"},
               {"SKYSLURM_CLUSTERS_FILE", "/nonexistent"},
               {"HOME", dir}};
  c.cwd = dir;
  return c;
}

std::string JobState(const Testbed& tb, std::string_view cluster, std::string_view job_id) {
  CommandOutput out =
      RunOn(tb, cluster, {"squeue", "-h", "-t", "all", "-j", std::string(job_id), "-o", "%T"},
            std::chrono::seconds(30));
  // A heterogeneous job's components are a line each: the first (its
  // leader) speaks for it.
  std::string state = out.out.substr(0, out.out.find('\n'));
  while (!state.empty() && std::isspace(static_cast<unsigned char>(state.back()))) {
    state.pop_back();
  }
  return state;
}

std::map<std::string, std::string> SubmissionRecord(const Testbed& tb, std::string_view cluster,
                                                    const std::string& job_id) {
  CommandOutput out = RunOn(tb, cluster, {"scontrol", "show", "job", "-o", job_id});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  static const std::set<std::string> kept = {
      "JobName",  "Partition",     "TimeLimit",     "TresPerNode", "WorkDir",  "NumNodes",
      "NumCPUs",  "NumTasks",      "MinMemoryNode", "Requeue",     "Account",  "QOS",
      "Features", "OverSubscribe", "Contiguous",    "Dependency",  "Priority", "UserId"};
  std::map<std::string, std::string> fields;
  std::istringstream words(out.out);
  for (std::string word; words >> word;) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = word.substr(0, eq);
    std::string value = word.substr(eq + 1);
    if (key == "StdOut") value = std::regex_replace(value, std::regex(job_id), "ID");
    if (kept.contains(key) || key == "StdOut") fields[key] = value;
  }
  return fields;
}

std::string WaitForJobEnd(const Testbed& tb, std::string_view cluster, std::string_view job_id,
                          std::chrono::seconds timeout) {
  static const char* kLive[] = {"PENDING",   "RUNNING",      "CONFIGURING", "COMPLETING",
                                "SUSPENDED", "REQUEUED",     "RESIZING",    "SIGNALING",
                                "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED"};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string state;
  while (std::chrono::steady_clock::now() < deadline) {
    state = JobState(tb, cluster, job_id);
    const bool live =
        std::any_of(std::begin(kLive), std::end(kLive), [&](const char* s) { return state == s; });
    if (!state.empty() && !live) return state;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return state;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::map<std::string, ssh::SshTarget> LoginTargets(const Testbed& tb) {
  std::map<std::string, ssh::SshTarget> targets;
  auto hosts = config::ReadSshConfig(tb.Path("slurm-config"), {"/root", "root"});
  EXPECT_TRUE(hosts.ok()) << hosts.status().message();
  if (!hosts.ok()) return targets;
  for (const auto& h : *hosts) targets[h.name] = ssh::TargetFromConfig(h);
  return targets;
}

void WriteFile(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  EXPECT_TRUE(out.good()) << "cannot write " << path;
}

std::string ReadFileWhenReady(const std::string& path, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    if (fs::exists(path, ec) && fs::file_size(path, ec) > 0) return ReadFile(path);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ReadFile(path);
}

TempDir::TempDir() {
  std::string templ = "/tmp/skyslurm-test-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
  }
  path_ = templ;
  fs::permissions(path_, fs::perms::all | fs::perms::sticky_bit);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void CopyReadyHome(const Testbed& tb, const std::string& home) {
  Exec({.argv = {"cp", "-a", tb.Path("home"), home}});
  const std::string state = home + "/.local/state/skyslurm";
  std::filesystem::remove_all(state + "/run");
  for (const char* f :
       {"/skyslurmd.db", "/skyslurmd.db-wal", "/skyslurmd.db-shm", "/skyslurmd.lock", "/routed"}) {
    std::filesystem::remove(state + f);
  }
  // Its history starts empty too: the ready user's decisions and daemon log
  // grow with every run on this testbed, and a test that reads its own
  // (the first decisions of a burst, a failure's daemon log) read theirs.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(state, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "decisions.log" || name.starts_with("skyslurmd.log") ||
        name == "skyslurmd.stderr") {
      std::filesystem::remove(entry.path(), ec);
    }
  }
}

int UserDaemonPid(const std::string& home) {
  std::ifstream in(home + "/.local/state/skyslurm/skyslurmd.lock");
  int pid = 0;
  in >> pid;
  return ProcessAlive(pid) ? pid : 0;
}

bool ProcessAlive(int pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string skip, state;
  stat >> skip >> skip >> state;
  return state != "Z";
}

void StopUserDaemon(const std::string& home) {
  const int pid = UserDaemonPid(home);
  if (pid == 0) return;
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 100 && ProcessAlive(pid); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::vector<int> MarkedTestbedProcesses(const std::string& dir) {
  const std::string marker = "SKYSLURM_TESTBED_DAEMON=" + dir;
  std::vector<int> pids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    // Zombies are gone in all but name (and reaped by init, not by us).
    std::string stat = ReadFile(entry.path() / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z') continue;
    std::string environ = ReadFile(entry.path() / "environ");
    std::size_t start = 0;
    while (start < environ.size()) {
      std::size_t end = environ.find('\0', start);
      if (end == std::string::npos) end = environ.size();
      if (std::string_view(environ).substr(start, end - start) == marker) {
        pids.push_back(std::stoi(name));
        break;
      }
      start = end + 1;
    }
  }
  return pids;
}

}  // namespace skyslurm::testing
