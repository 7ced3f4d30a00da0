#include "broker/util/spawn.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string_view>

extern char** environ;

namespace skyslurm {
namespace {

// A pipe's two ends, both close-on-exec: the child gets only what dup2 gives.
struct PipeEnds {
  OwnedFd read;
  OwnedFd write;
};

Result<PipeEnds> OpenPipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return InternalError(std::strerror(errno));
  return PipeEnds{OwnedFd(fds[0]), OwnedFd(fds[1])};
}

void SetNonBlocking(const OwnedFd& fd) {
  if (fd.open()) fcntl(fd.get(), F_SETFL, fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
}

std::vector<char*> Pointers(std::vector<std::string>& words) {
  std::vector<char*> out;
  out.reserve(words.size() + 1);
  for (auto& w : words) out.push_back(w.data());
  out.push_back(nullptr);
  return out;
}

// The attributes every child gets: its own process group, so a timeout
// kills what it started too; a clean signal mask and default dispositions
// (a program that inherits a blocked SIGTERM never stops).
class SpawnAttributes {
 public:
  SpawnAttributes() {
    posix_spawnattr_init(&attr_);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr_, &none);
    posix_spawnattr_setsigdefault(&attr_, &all);
    posix_spawnattr_setpgroup(&attr_, 0);
    posix_spawnattr_setflags(
        &attr_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attr_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  const posix_spawnattr_t* get() const { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

}  // namespace

OwnedFd& OwnedFd::operator=(OwnedFd&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = other.Release();
  }
  return *this;
}

void OwnedFd::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

int OwnedFd::Release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

Result<SpawnedProcess> Spawn(const SpawnRequest& request) {
  if (request.argv.empty() || request.argv[0].empty()) {
    return InvalidArgumentError("no program given to run");
  }
  const std::string& program = request.argv[0];
  auto in = request.stdin_piped ? OpenPipe() : Result<PipeEnds>(PipeEnds{});
  auto out = OpenPipe();
  auto err = OpenPipe();
  if (!in.ok() || !out.ok() || !err.ok()) {
    const Status& failed = !in.ok() ? in.status() : !out.ok() ? out.status() : err.status();
    return InternalError(
        fmt::format("cannot create pipes to run {}: {}", program, failed.message()));
  }

  FileActions actions;
  if (request.stdin_piped) {
    posix_spawn_file_actions_adddup2(actions.get(), in->read.get(), STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(actions.get(), out->write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(actions.get(), err->write.get(), STDERR_FILENO);
  // Nothing of ours leaks into the program (an SSH socket, a database).
  posix_spawn_file_actions_addclosefrom_np(actions.get(), STDERR_FILENO + 1);
  if (!request.cwd.empty()) {
    posix_spawn_file_actions_addchdir_np(actions.get(), request.cwd.c_str());
  }

  SpawnAttributes attributes;
  std::vector<std::string> argv = request.argv;
  std::vector<std::string> env = request.env;
  SpawnedProcess process;
  const int failed = posix_spawnp(&process.pid, program.c_str(), actions.get(), attributes.get(),
                                  Pointers(argv).data(), Pointers(env).data());
  if (failed != 0) {
    std::string why = fmt::format("cannot run {}: {}", program, std::strerror(failed));
    if (failed == ENOENT) return NotFoundError(std::move(why));
    if (failed == EACCES) return PermissionDeniedError(std::move(why));
    return InternalError(std::move(why));
  }
  if (request.stdin_piped) process.in = std::move(in->write);
  process.out = std::move(out->read);
  process.err = std::move(err->read);
  for (const OwnedFd* fd : {&process.in, &process.out, &process.err}) SetNonBlocking(*fd);
  return process;
}

std::vector<std::string> EnvironmentWith(
    const std::vector<std::pair<std::string, std::string>>& set,
    const std::vector<std::string>& unset) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  for (const auto& name : unset) env.erase(name);
  for (const auto& [name, value] : set) env[name] = value;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

}  // namespace skyslurm
