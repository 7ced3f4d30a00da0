#include "shim/cli/daemon_client.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "broker/daemon/job_input.h"

namespace skyslurm::cli {

namespace fs = std::filesystem;

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
      slurm_bin_dir_(std::move(slurm_bin_dir)) {}

Result<Json::Value> DaemonClient::Call(const std::string& method, const std::string& path,
                                       const Json::Value* body, std::chrono::seconds timeout) {
  httplib::Client client(paths_.socket);
  client.set_address_family(AF_UNIX);
  client.set_connection_timeout(std::chrono::seconds(2));
  client.set_read_timeout(timeout);
  client.set_write_timeout(std::chrono::seconds(10));
  httplib::Result res = method == "GET"
                            ? client.Get(path)
                            : client.Post(path, body != nullptr ? daemon::WriteJson(*body) : "{}",
                                          "application/json");
  if (!res) {
    return UnavailableError(fmt::format("skyslurmd does not answer on {}: {}", paths_.socket,
                                        httplib::to_string(res.error())));
  }
  auto json = daemon::ParseJson(res->body);
  if (!json.ok()) return InternalError("skyslurmd answered something that is not JSON");
  if (res->status / 100 != 2) {
    const std::string message =
        json->isObject() && (*json)["error"].isString() ? (*json)["error"].asString() : res->body;
    switch (res->status) {
      case 400:
        return InvalidArgumentError(message);
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
  httplib::Client client(paths_.socket);
  client.set_address_family(AF_UNIX);
  client.set_connection_timeout(std::chrono::milliseconds(500));
  client.set_read_timeout(std::chrono::seconds(5));
  auto res = client.Get("/v1/health");
  return res && res->status == 200;
}

Status DaemonClient::EnsureRunning(std::chrono::milliseconds wait) {
  if (Alive()) return OkStatus();
  if (Status st = daemon::EnsurePrivateDir(paths_.run_dir); !st.ok()) return st;
  std::error_code ec;
  fs::create_directories(fs::path(paths_.log).parent_path(), ec);
  const std::string program = SkyslurmdPath();
  std::vector<std::string> args = {program, "--on-demand", "--log-file", paths_.log};
  if (!slurm_bin_dir_.empty()) args.insert(args.end(), {"--slurm-bin-dir", slurm_bin_dir_});
  if (Status st = Spawn(args); !st.ok()) return st;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto spawned = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < deadline) {
    if (Alive()) return OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // The one started found a daemon still exiting (it keeps the lock until
    // it is gone, seconds after it stopped answering) and left: once the
    // lock is free and nobody answers, one is started again.
    if (std::chrono::steady_clock::now() - spawned > std::chrono::milliseconds(500) &&
        LockIsFree()) {
      if (Status st = Spawn(args); !st.ok()) return st;
      spawned = std::chrono::steady_clock::now();
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

Status DaemonClient::Spawn(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid < 0)
    return UnavailableError(fmt::format("cannot start skyslurmd: {}", std::strerror(errno)));
  if (pid == 0) {
    // A grandchild in its own session, so it outlives this command and its
    // terminal; the intermediate child exits at once (no zombie).
    if (::fork() != 0) ::_exit(0);
    ::setsid();
    const int in = ::open("/dev/null", O_RDONLY);
    // The daemon logs to its own, rotated file; what it prints besides (a
    // crash report) goes here.
    const int log = ::open(paths_.stderr_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (in >= 0) ::dup2(in, 0);
    if (log >= 0) {
      ::dup2(log, 1);
      ::dup2(log, 2);
    }
    for (int fd = 3; fd < 1024; ++fd) ::close(fd);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "skyslurm: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return OkStatus();
}

}  // namespace skyslurm::cli
