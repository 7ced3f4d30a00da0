#include "shim/cli/daemon_client.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <utility>

#include "broker/config/run_dir.h"
#include "broker/daemon/jobs/job_input.h"
#include "broker/site/munge_identity.h"

namespace skyslurm::cli {

namespace fs = std::filesystem;

namespace {

// HTTP on the daemon's socket that sends nothing to a listener that is not
// this user (config::PeerProblem): a socket planted at the path would get
// the job's environment, script and secrets.
class OwnDaemonClient final : public httplib::ClientImpl {
 public:
  explicit OwnDaemonClient(const std::string& socket) : httplib::ClientImpl(socket) {
    set_address_family(AF_UNIX);
  }
  // Why the last connection was refused ("" when none was).
  const std::string& refused() const { return refused_; }

 protected:
  bool create_and_connect_socket(Socket& socket, httplib::Error& error) override {
    if (!httplib::ClientImpl::create_and_connect_socket(socket, error)) return false;
    if (auto problem = config::PeerProblem(socket.sock)) {
      refused_ = *problem;
      shutdown_socket(socket);
      close_socket(socket);
      error = httplib::Error::Connection;
      return false;
    }
    return true;
  }

 private:
  std::string refused_;
};

// The read end of the pipe a started daemon holds the write end of: closed
// on destruction.
class ExitPipe {
 public:
  ExitPipe() = default;
  explicit ExitPipe(int fd) : fd_(fd) {}
  ExitPipe(const ExitPipe&) = delete;
  ExitPipe& operator=(const ExitPipe&) = delete;
  ExitPipe& operator=(ExitPipe&& other) noexcept {
    Reset();
    fd_ = std::exchange(other.fd_, -1);
    return *this;
  }
  ~ExitPipe() { Reset(); }
  bool open() const { return fd_ >= 0; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Whether the daemon has exited (the pipe's last writer gone), waiting
  // at most `wait` for it.
  bool Hangup(std::chrono::milliseconds wait) const {
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    return ::poll(&p, 1, static_cast<int>(wait.count())) > 0;
  }

 private:
  int fd_ = -1;
};

std::uintmax_t SizeOf(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

// The last line written to `path` past `from` bytes ("" for none).
std::string LastLineSince(const std::string& path, std::uintmax_t from) {
  std::ifstream in(path);
  if (!in) return "";
  in.seekg(static_cast<std::streamoff>(from));
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  }
  if (last.size() > 300) {
    last.resize(300);
    last.append("...");
  }
  return last;
}

}  // namespace

std::string SkyslurmdPath() {
  if (const char* p = std::getenv("SKYSLURMD"); p != nullptr && *p != '\0') return p;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const char* rel : {"../sbin/skyslurmd", "../broker/skyslurmd"}) {
      const fs::path p = self.parent_path() / rel;
      if (fs::exists(p, ec)) return fs::weakly_canonical(p, ec).string();
    }
  }
  return "skyslurmd";
}

DaemonClient::DaemonClient(const config::Environment& env, const config::LoadedConfig& config,
                           std::string slurm_bin_dir)
    : paths_(daemon::ResolveDaemonPaths(env, config.paths)),
      site_(config.settings.site),
      site_user_(config.settings.site_user),
      slurm_bin_dir_(std::move(slurm_bin_dir)) {}

httplib_result_t DaemonClient::CallSite(const std::string& method, const std::string& path,
                                        const std::string& body, std::chrono::seconds timeout) {
  // Only the site daemon's user may decode the credential.
  std::optional<uid_t> for_uid;
  if (const passwd* pw = ::getpwnam(site_user_.c_str()); pw != nullptr) for_uid = pw->pw_uid;
  site::MungeOptions munge;
  if (const char* socket = std::getenv("SKYSLURM_MUNGE_SOCKET"); socket != nullptr) {
    munge.socket = socket;
  }
  std::vector<std::string> tried;
  for (std::size_t k = 0; k < site_.size(); ++k) {
    const std::size_t i = (answered_ + k) % site_.size();
    const std::string& replica = site_[i];
    // A credential per attempt: each is good once. /v1/health needs none.
    std::string credential;
    if (path != "/v1/health") {
      SKY_ASSIGN_OR_RETURN(
          credential,
          site::MakeMungeCredential(site::RequestBinding(method, path, body), for_uid, munge));
    }
    const auto colon = replica.rfind(':');
    httplib::Client client(replica.substr(0, colon), std::atoi(replica.c_str() + colon + 1));
    client.set_connection_timeout(std::chrono::seconds(2));
    client.set_read_timeout(timeout);
    client.set_write_timeout(std::chrono::seconds(10));
    httplib::Headers headers;
    if (!credential.empty()) headers.emplace(std::string(site::kMungeHeader), credential);
    httplib::Result res = method == "GET"
                              ? client.Get(path.c_str(), headers)
                              : client.Post(path.c_str(), headers, body, "application/json");
    if (!res) {
      // Not answered (down, or its answer lost): the next replica. A
      // submission asked again is the same job (its sky id), never a second.
      tried.push_back(fmt::format("{} ({})", replica, httplib::to_string(res.error())));
      continue;
    }
    answered_ = i;
    return SiteAnswer{res->status, res->body};
  }
  return UnavailableError(
      fmt::format("no replica of the site's skyslurmd answers: {}", fmt::join(tried, ", ")));
}

Result<Json::Value> DaemonClient::Call(const std::string& method, const std::string& path,
                                       const Json::Value* body, std::chrono::seconds timeout) {
  SiteAnswer answer;
  if (site()) {
    SKY_ASSIGN_OR_RETURN(answer, CallSite(method, path,
                                          method == "GET"   ? ""
                                          : body != nullptr ? daemon::WriteJson(*body)
                                                            : "{}",
                                          timeout));
  } else {
    if (auto problem = config::PrivateDirProblem(paths_.run_dir)) {
      return PermissionDeniedError("skyslurm: " + *problem);
    }
    OwnDaemonClient client(paths_.socket);
    client.set_connection_timeout(std::chrono::seconds(2));
    client.set_read_timeout(timeout);
    client.set_write_timeout(std::chrono::seconds(10));
    httplib::Result res = method == "GET"
                              ? client.Get(path)
                              : client.Post(path, body != nullptr ? daemon::WriteJson(*body) : "{}",
                                            "application/json");
    if (!client.refused().empty()) return PermissionDeniedError("skyslurm: " + client.refused());
    if (!res) {
      return UnavailableError(fmt::format("skyslurmd does not answer on {}: {}", paths_.socket,
                                          httplib::to_string(res.error())));
    }
    answer = {res->status, res->body};
  }
  const SiteAnswer* res = &answer;
  auto json = daemon::ParseJson(res->body);
  if (!json.ok()) return InternalError("skyslurmd answered something that is not JSON");
  if (res->status / 100 != 2) {
    const std::string message =
        json->isObject() && (*json)["error"].isString() ? (*json)["error"].asString() : res->body;
    switch (res->status) {
      case 400:
        return InvalidArgumentError(message);
      case 403:
        return PermissionDeniedError(message);
      case 404:
        return NotFoundError(message);
      case 409:
        return FailedPreconditionError(message);
      case 503:
        return UnavailableError(message);
      default:
        return InternalError(message);
    }
  }
  return json;
}

Result<Json::Value> DaemonClient::Get(const std::string& path) {
  return Call("GET", path, nullptr, std::chrono::seconds(60));
}

Result<Json::Value> DaemonClient::GetQuick(const std::string& path, std::chrono::seconds timeout) {
  return Call("GET", path, nullptr, timeout);
}

Result<Json::Value> DaemonClient::Post(const std::string& path, const Json::Value& body,
                                       std::chrono::seconds timeout) {
  return Call("POST", path, &body, timeout);
}

bool DaemonClient::Alive() {
  if (site()) {
    auto res = CallSite("GET", "/v1/health", "", std::chrono::seconds(5));
    return res.ok() && res->status == 200;
  }
  if (config::PrivateDirProblem(paths_.run_dir)) return false;
  OwnDaemonClient client(paths_.socket);
  client.set_connection_timeout(std::chrono::milliseconds(500));
  client.set_read_timeout(std::chrono::seconds(5));
  auto res = client.Get("/v1/health");
  refused_ = client.refused();
  return res && res->status == 200;
}

Status DaemonClient::EnsureRunning(std::chrono::milliseconds wait) {
  if (site()) {
    // The site runs its daemon: none of the user's is started.
    auto res = CallSite("GET", "/v1/health", "", std::chrono::seconds(5));
    if (!res.ok()) return res.status();
    if (res->status != 200) {
      auto json = daemon::ParseJson(res->body);
      return PermissionDeniedError(
          "the site's skyslurmd refused: " +
          (json.ok() && (*json)["error"].isString() ? (*json)["error"].asString() : res->body));
    }
    return OkStatus();
  }
  // The folder first: nothing, not even a look, goes to a socket in a
  // folder that is not the user's own.
  if (Status st = daemon::EnsurePrivateDir(paths_.run_dir); !st.ok()) {
    return st.WithContext("skyslurm");
  }
  if (Alive()) return OkStatus();
  if (!refused_.empty()) return PermissionDeniedError("skyslurm: " + refused_);
  std::error_code ec;
  fs::create_directories(fs::path(paths_.log).parent_path(), ec);
  const std::string program = SkyslurmdPath();
  std::vector<std::string> args = {program, "--on-demand", "--log-file", paths_.log};
  if (!slurm_bin_dir_.empty()) args.insert(args.end(), {"--slurm-bin-dir", slurm_bin_dir_});
  // What the daemon writes from its start on: its reason, should it exit.
  std::uintmax_t log_from = 0, stderr_from = 0;
  ExitPipe exit_pipe;
  std::chrono::steady_clock::time_point spawned;
  auto start = [&]() -> Status {
    log_from = SizeOf(paths_.log);
    stderr_from = SizeOf(paths_.stderr_file);
    SKY_ASSIGN_OR_RETURN(int fd, Spawn(args));
    exit_pipe = ExitPipe(fd);
    spawned = std::chrono::steady_clock::now();
    return OkStatus();
  };
  SKY_RETURN_IF_ERROR(start());
  const auto deadline = std::chrono::steady_clock::now() + wait;
  int left_alone = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Alive()) return OkStatus();
    bool exited = false;
    if (exit_pipe.open()) {
      exited = exit_pipe.Hangup(std::chrono::milliseconds(50));
      if (exited) exit_pipe.Reset();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (Alive()) return OkStatus();
    // The one started left while no other daemon holds the lock (or none
    // ever made it): it could not start (a state folder it refuses, a
    // program missing or not skyslurmd). Said at once, in its own words, not after
    // `wait`; twice in a row, so that a daemon that left just as another
    // let go of the lock is not taken for one that cannot start.
    if (exited && (LockIsFree() || !fs::exists(paths_.lock))) {
      if (++left_alone == 2) {
        std::string said = LastLineSince(paths_.log, log_from);
        if (said.empty()) said = LastLineSince(paths_.stderr_file, stderr_from);
        return UnavailableError(fmt::format(
            "skyslurmd ({}) did not start: it exited{}; see {} and {}", program,
            said.empty() ? " without a word" : ": " + said, paths_.stderr_file, paths_.log));
      }
      SKY_RETURN_IF_ERROR(start());
      continue;
    }
    // The one started found a daemon still exiting (it keeps the lock until
    // it is gone, seconds after it stopped answering) and left: once the
    // lock is free and nobody answers, one is started again.
    if (!exit_pipe.open() &&
        std::chrono::steady_clock::now() - spawned > std::chrono::milliseconds(500) &&
        LockIsFree()) {
      SKY_RETURN_IF_ERROR(start());
    }
  }
  return UnavailableError(fmt::format("skyslurmd ({}) did not start within {} s; see {} and {}",
                                      program, wait.count() / 1000, paths_.stderr_file,
                                      paths_.log));
}

bool DaemonClient::LockIsFree() const {
  const int fd = ::open(paths_.lock.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;  // not made yet: the daemon started is on its way
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);  // and with it the lock, if taken
  return free;
}

Result<int> DaemonClient::Spawn(const std::vector<std::string>& args) {
  // The daemon holds the write end as its fd 3 for its whole life (its own
  // commands never inherit it: they start with only 0-2): its exit is the
  // read end's hangup.
  int exit_pipe[2];
  if (::pipe2(exit_pipe, O_CLOEXEC) != 0) {
    return UnavailableError(fmt::format("cannot start skyslurmd: {}", std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(exit_pipe[0]);
    ::close(exit_pipe[1]);
    return UnavailableError(fmt::format("cannot start skyslurmd: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    // A grandchild in its own session, so it outlives this command and its
    // terminal; the intermediate child exits at once (no zombie).
    if (::fork() != 0) ::_exit(0);
    ::setsid();
    // No signal held: a submission holds Ctrl-C and the like while it
    // waits for this very daemon's answer (route_command.cc), and the mask
    // is inherited; the daemon must stop on SIGTERM.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // Above the descriptors about to be set (F_DUPFD's copy is inherited).
    const int exit_end = ::fcntl(exit_pipe[1], F_DUPFD, 10);
    const int in = ::open("/dev/null", O_RDONLY);
    // The daemon logs to its own, rotated file; what it prints besides (a
    // crash report) goes here.
    const int log = ::open(paths_.stderr_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (in >= 0) ::dup2(in, 0);
    if (log >= 0) {
      ::dup2(log, 1);
      ::dup2(log, 2);
    }
    if (exit_end >= 0) ::dup2(exit_end, 3);
    for (int fd = exit_end >= 0 ? 4 : 3; fd < 1024; ++fd) ::close(fd);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "skyslurm: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(exit_pipe[1]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return exit_pipe[0];
}

std::optional<DaemonClient> ConnectToDaemon(const std::map<std::string, std::string>& flags) {
  auto env = config::Environment::FromProcess();
  auto loaded = config::LoadConfig(env, flags);
  if (!loaded.ok()) {
    std::fprintf(stderr, "skyslurm: %s\n", loaded.status().message().c_str());
    return std::nullopt;
  }
  DaemonClient client(env, *loaded);
  if (Status st = client.EnsureRunning(); !st.ok()) {
    std::fprintf(stderr, "skyslurm: %s\n", st.message().c_str());
    return std::nullopt;
  }
  return client;
}

}  // namespace skyslurm::cli
