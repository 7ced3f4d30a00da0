#include "broker/config/login_session.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <fstream>

#include "broker/config/run_dir.h"
#include "broker/util/command.h"
#include "broker/util/strings.h"

namespace skyslurm::config {

LoginSession SessionFor(const std::string& run_dir, const std::string& cluster,
                        const std::string& jump, const std::string& clusters_file,
                        bool jump_is_a_host) {
  LoginSession s;
  s.cluster = cluster;
  s.jump = jump;
  if (jump_is_a_host) s.clusters_file = clusters_file;
  s.socket = run_dir + "/sessions/" + cluster + ".sock";
  s.until_file = s.socket + ".until";
  return s;
}

std::string NeedsLoginReason(const std::string& cluster) {
  return fmt::format("{} needs a one-time code: run skyslurm login {}", cluster, cluster);
}

std::optional<std::chrono::system_clock::time_point> ParseSessionUntil(const std::string& text) {
  const std::string t = Trim(text);
  long long seconds = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), seconds);
  // Beyond the year 36812 is no time a login wrote (and would overflow).
  constexpr long long kLatest = 1LL << 40;
  if (ec != std::errc() || end != t.data() + t.size() || seconds <= 0 || seconds > kLatest) {
    return std::nullopt;
  }
  return std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
}

namespace {

// Whether a live master listens on the socket: this user's own socket, and
// a connect succeeds (a master that died leaves its file behind).
bool MasterAnswers(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_uid != ::geteuid()) {
    return false;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// The lapse time `skyslurm login` wrote: read only from this user's own
// file (no link followed, no one else able to write it) in this user's
// private folder.
std::optional<std::chrono::system_clock::time_point> ReadUntil(const LoginSession& session) {
  const std::string dir = session.until_file.substr(0, session.until_file.rfind('/'));
  if (PrivateDirProblem(dir)) return std::nullopt;
  const int fd = ::open(session.until_file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::string text(64, '\0');  // a number of seconds: anything longer is not ours
  ssize_t n = -1;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
      (st.st_mode & 022) == 0) {
    n = ::read(fd, text.data(), text.size());
  }
  ::close(fd);
  if (n <= 0) return std::nullopt;
  text.resize(static_cast<std::size_t>(n));
  return ParseSessionUntil(text);
}

}  // namespace

std::optional<std::chrono::system_clock::time_point> SessionUntil(
    const LoginSession& session, std::chrono::system_clock::time_point now) {
  auto until = ReadUntil(session);
  if (!until || *until <= now) return std::nullopt;
  if (!MasterAnswers(session.socket)) return std::nullopt;
  return until;
}

bool SessionLapsed(const LoginSession& session, std::chrono::system_clock::time_point now) {
  struct stat st {};
  if (::lstat(session.socket.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode) ||
      st.st_uid != ::geteuid()) {
    return false;
  }
  const auto until = ReadUntil(session);
  return until && *until <= now;
}

namespace {

std::vector<std::string> SshWithConfig(const LoginSession& session) {
  std::vector<std::string> argv = {"ssh"};
  if (!session.clusters_file.empty()) argv.insert(argv.end(), {"-F", session.clusters_file});
  return argv;
}

}  // namespace

std::vector<std::string> JumpArgv(const LoginSession& session, bool through_master) {
  std::vector<std::string> argv = SshWithConfig(session);
  argv.insert(argv.end(), {"-o", "BatchMode=yes", "-o", "LogLevel=ERROR"});
  if (through_master) {
    argv.insert(argv.end(), {"-S", session.socket, "-o", "ControlMaster=no"});
  }
  argv.insert(argv.end(), {"-W", "[%h]:%p", session.jump});
  return argv;
}

std::string JumpCommandLine(const LoginSession& session, bool through_master) {
  return ShellJoin(JumpArgv(session, through_master));
}

Result<std::string> SessionProxyCommand(const LoginSession& session, bool one_time_code,
                                        bool for_openssh) {
  const auto now = std::chrono::system_clock::now();
  const auto held = SessionUntil(session, now);
  if (held) return JumpCommandLine(session, true);
  if (one_time_code) {
    // A lapsed master must not outlive session_lifetime (one being opened
    // has no lapse time yet: left alone).
    if (SessionLapsed(session, now)) {
      LocalCommandRunner runner;
      (void)runner.Run({.argv = CloseMasterArgv(session), .timeout = std::chrono::seconds(5)});
    }
    return FailedPreconditionError(NeedsLoginReason(session.cluster));
  }
  // OpenSSH reads the file's ProxyJump itself (multiple hops, host:port).
  if (for_openssh) return std::string();
  return JumpCommandLine(session, false);
}

std::vector<std::string> OpenMasterArgv(const LoginSession& session,
                                        std::chrono::seconds lifetime) {
  std::vector<std::string> argv = SshWithConfig(session);
  argv.insert(
      argv.end(),
      {"-M", "-S", session.socket, "-o", fmt::format("ControlPersist={}s", lifetime.count()), "-o",
       "ServerAliveInterval=60", "-o", "LogLevel=ERROR", "-f", "-N", session.jump});
  return argv;
}

std::vector<std::string> CloseMasterArgv(const LoginSession& session) {
  std::vector<std::string> argv = SshWithConfig(session);
  argv.insert(argv.end(),
              {"-S", session.socket, "-o", "LogLevel=ERROR", "-O", "exit", session.jump});
  return argv;
}

}  // namespace skyslurm::config
