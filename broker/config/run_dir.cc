#include "broker/config/run_dir.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace skyslurm::config {

std::string StateDir(const std::optional<std::string>& xdg_state_home, const std::string& home) {
  return (xdg_state_home ? *xdg_state_home : home + "/.local/state") + "/skyslurm";
}

std::string RunDir(const std::optional<std::string>& xdg_runtime_dir,
                   const std::string& state_dir) {
  struct stat st {};
  if (xdg_runtime_dir && !xdg_runtime_dir->empty() && ::stat(xdg_runtime_dir->c_str(), &st) == 0 &&
      S_ISDIR(st.st_mode)) {
    return *xdg_runtime_dir + "/skyslurm";
  }
  return state_dir + "/run";
}

namespace {

std::string Octal(unsigned mode) {
  std::string digits;
  for (int shift = 9; shift >= 0; shift -= 3)
    digits += static_cast<char>('0' + ((mode >> shift) & 7));
  return digits;
}

}  // namespace

std::optional<std::string> PrivateDirProblem(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return dir + " is not a folder";
  if (st.st_uid != ::geteuid()) {
    return dir + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user (uid " +
           std::to_string(::geteuid()) + "); refusing to use it";
  }
  if ((st.st_mode & 077) != 0) {
    return dir + " can be entered by others (mode " + Octal(st.st_mode & 07777) +
           "); refusing to use it: make it private (chmod 700 " + dir + ") or remove it";
  }
  return std::nullopt;
}

std::optional<std::string> PeerProblem(int fd) {
  struct ucred peer {};
  socklen_t size = sizeof peer;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) {
    return std::string("cannot tell who listens on the socket: ") + std::strerror(errno);
  }
  if (peer.uid != ::geteuid()) {
    return "the process listening on the socket (pid " + std::to_string(peer.pid) +
           ") runs as uid " + std::to_string(peer.uid) + ", not as this user (uid " +
           std::to_string(::geteuid()) + "); nothing was sent to it";
  }
  return std::nullopt;
}

}  // namespace skyslurm::config
