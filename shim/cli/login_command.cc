#include "shim/cli/login_command.h"

#include <fcntl.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "broker/config/login_session.h"
#include "broker/config/run_dir.h"
#include "broker/daemon/daemon_paths.h"
#include "shim/cli/cluster_views.h"

namespace skyslurm::cli {
namespace {

constexpr const char* kAskpassFile = "SKYSLURM_ASKPASS_FILE";

int Fail(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "skyslurm %s: %s\n", command.c_str(), message.c_str());
  return 1;
}

// The session of `cluster`, or why it has none.
Result<config::LoginSession> SessionOf(const Workspace& ws, const std::string& cluster) {
  const cluster::ClusterEntry* entry = ws.registry.Find(cluster);
  if (entry == nullptr) {
    return NotFoundError(fmt::format("no cluster '{}' (see skyslurm check)", cluster));
  }
  if (!entry->session) {
    return FailedPreconditionError(fmt::format(
        "{} is reached without a bastion (no ProxyJump in {}): it has no session to open", cluster,
        ws.config.paths.clusters_file));
  }
  return *entry->session;
}

// Makes `dir` and its parent (the run folder) this user's private folders,
// and what lies above them as the daemon would (a first login may come
// before any daemon made them), or says why not.
Status PrivateFolder(const std::string& dir) {
  for (const std::string& d : {dir.substr(0, dir.rfind('/')), dir}) {
    if (Status st = daemon::EnsurePrivateDir(d); !st.ok()) return st;
  }
  return OkStatus();
}

// Runs argv with this process's terminal (ssh prompts there) and `env_add`
// added; its exit status. `quiet`: its stderr to /dev/null.
int RunAttached(const std::vector<std::string>& argv,
                const std::vector<std::pair<std::string, std::string>>& env_add,
                bool quiet = false) {
  // Everything the child needs is made before the fork (no allocation
  // after it: the caller may have threads).
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env_add) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    bool replaced = false;
    for (const auto& [k, v] : env_add) {
      replaced =
          replaced || (entry.starts_with(k) && entry.size() > k.size() && entry[k.size()] == '=');
    }
    if (!replaced) envp.push_back(*e);
  }
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int null = quiet ? ::open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
  const pid_t pid = ::fork();
  if (pid < 0) return 255;
  if (pid == 0) {
    if (null >= 0) ::dup2(null, STDERR_FILENO);
    ::execvpe(args[0], args.data(), envp.data());
    std::fprintf(stderr, "skyslurm login: cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  if (null >= 0) ::close(null);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Writes `text` to `path` (mode 0600) whole, or not at all.
Status WritePrivate(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return UnavailableError(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return UnavailableError(fmt::format("cannot write {}", path));
  }
  return OkStatus();
}

std::string Local(std::chrono::system_clock::time_point t) {
  return fmt::format("{:%Y-%m-%d %H:%M %Z}",
                     fmt::localtime(std::chrono::system_clock::to_time_t(t)));
}

// Whether a master's socket is at `path` (this user's).
bool SocketThere(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == ::geteuid();
}

}  // namespace

bool RunAsAskpass() {
  const char* file = std::getenv(kAskpassFile);
  if (file == nullptr || *file != '/') return false;
  std::ifstream in(file);
  std::string code;
  std::getline(in, code);
  std::printf("%s\n", code.c_str());
  return true;
}

int RunLogin(const std::string& cluster, bool report_on_stderr) {
  auto ws = OpenWorkspace({});
  if (!ws.ok()) return Fail("login", ws.status().message());
  auto session = SessionOf(*ws, cluster);
  if (!session.ok()) return Fail("login", session.status().message());
  const std::string dir = session->socket.substr(0, session->socket.rfind('/'));
  if (Status st = PrivateFolder(dir); !st.ok()) return Fail("login", st.message());
  // The new master is opened beside the one that may hold now, and takes
  // its place only once it is authenticated: a wrong code leaves the old
  // session as it was.
  config::LoginSession fresh = *session;
  fresh.socket = session->socket + ".new";
  ::unlink(fresh.socket.c_str());
  const auto lifetime = std::chrono::seconds(ws->config.settings.session_lifetime);
  std::vector<std::string> argv = config::OpenMasterArgv(fresh, lifetime);
  std::vector<std::pair<std::string, std::string>> env;
  std::string code_file;
  if (::isatty(STDIN_FILENO) == 0) {
    // No terminal: the code is stdin's first line, handed to ssh by
    // SSH_ASKPASS (this program) from a private file that is gone once ssh
    // is done; one try, as a wrong code cannot be asked again.
    std::string code;
    std::getline(std::cin, code);
    if (code.empty() || code.size() > 64) {
      return Fail("login", "stdin is not a terminal: give the one-time code on stdin's first line");
    }
    code_file = dir + "/." + cluster + ".code";
    if (Status st = WritePrivate(code_file, code + "\n"); !st.ok())
      return Fail("login", st.message());
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return Fail("login", "cannot find this program for SSH_ASKPASS");
    env = {{"SSH_ASKPASS", std::string(self, static_cast<std::size_t>(n))},
           {"SSH_ASKPASS_REQUIRE", "force"},
           {kAskpassFile, code_file}};
    argv.insert(argv.begin() + 1, {"-o", "NumberOfPasswordPrompts=1"});
  }
  const auto opened = std::chrono::system_clock::now();
  const int rc = RunAttached(argv, env);
  if (!code_file.empty()) ::unlink(code_file.c_str());
  if (rc != 0) {
    ::unlink(fresh.socket.c_str());
    return Fail("login", fmt::format("ssh to {}'s bastion {} failed (exit {}); no session opened",
                                     cluster, session->jump, rc));
  }
  // Its lapse time first, then its socket in place: whoever finds the
  // socket finds the time too (a socket without one is a master being
  // opened, which nobody closes).
  const auto until = opened + lifetime;
  const auto until_s = std::chrono::duration_cast<std::chrono::seconds>(until.time_since_epoch());
  config::LoginSession old = *session;
  old.socket = session->socket + ".old";
  const bool replacing = SocketThere(session->socket);
  Status placed = WritePrivate(session->until_file, fmt::format("{}\n", until_s.count()));
  if (placed.ok() && replacing && ::rename(session->socket.c_str(), old.socket.c_str()) != 0) {
    placed =
        UnavailableError(fmt::format("cannot move {}: {}", session->socket, std::strerror(errno)));
  }
  if (placed.ok() && ::rename(fresh.socket.c_str(), session->socket.c_str()) != 0) {
    placed =
        UnavailableError(fmt::format("cannot place {}: {}", session->socket, std::strerror(errno)));
  }
  if (!placed.ok()) {
    RunAttached(config::CloseMasterArgv(fresh), {}, true);
    return Fail("login", placed.message());
  }
  if (replacing) {
    // A master removes only the socket it made (under its first name).
    RunAttached(config::CloseMasterArgv(old), {}, true);
    ::unlink(old.socket.c_str());
  }
  std::fprintf(
      report_on_stderr ? stderr : stdout,
      "%s: session open until %s (session_lifetime %llds); skyslurm reaches %s through it\n",
      cluster.c_str(), Local(until).c_str(), static_cast<long long>(lifetime.count()),
      cluster.c_str());
  return 0;
}

int RunLogout(const std::string& cluster) {
  auto ws = OpenWorkspace({});
  if (!ws.ok()) return Fail("logout", ws.status().message());
  auto session = SessionOf(*ws, cluster);
  if (!session.ok()) return Fail("logout", session.status().message());
  const bool was_open = SocketThere(session->socket);
  if (was_open) {
    RunAttached(config::CloseMasterArgv(*session), {}, true);
    ::unlink(session->socket.c_str());  // left by a master opened under another name
  }
  ::unlink(session->until_file.c_str());
  std::printf("%s: %s\n", cluster.c_str(), was_open ? "session closed" : "no session was open");
  return 0;
}

}  // namespace skyslurm::cli
