// skyslurmd-runas: the one privileged step of a site's skyslurmd. It runs one
// of Slurm's client commands as a user, the way Slurm's own daemons act for
// users: it becomes the user (their uid, gid and supplementary groups) and
// only then runs the command, so that Slurm sees the user, not the site, and
// the cluster's own permissions apply.
//
//   skyslurmd-runas --user NAME [--cwd DIR] -- PROGRAM [ARGUMENT...]
//
// It is installed set-uid root and executable only by the site daemon's
// group (mode 4750, root:skyslurm). Nothing else runs privileged: it reads
// no file of the caller's, runs only Slurm's commands from its own folder
// (never a path the caller gives) with a slurm.conf of root's only, never
// acts as root, root's group or a system account (a uid below UID_MIN of
// /etc/login.defs), drops every privilege before it looks at the caller's
// folder, and leaves the loader's variables out of the command's
// environment. It links the C and C++ runtimes only.
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#ifndef SKYSLURM_RUNAS_SLURM_BIN_DIR
#define SKYSLURM_RUNAS_SLURM_BIN_DIR "/usr/bin"
#endif

extern char** environ;

namespace {

constexpr int kRefused = 126;  // as a shell says of a command it cannot run

// Slurm's client commands, the only programs it runs.
constexpr std::array<std::string_view, 8> kPrograms = {"sbatch", "scancel", "scontrol", "squeue",
                                                       "sacct",  "sinfo",   "sprio",    "sshare"};

int Refuse(const std::string& why) {
  std::fprintf(stderr, "skyslurmd-runas: %s\n", why.c_str());
  return kRefused;
}

// The lowest uid of a person's account (login.defs' UID_MIN, 1000 unless it says).
uid_t LowestUserUid() {
  std::ifstream defs("/etc/login.defs");
  std::string line;
  while (std::getline(defs, line)) {
    std::istringstream words(line);
    std::string key;
    unsigned long value = 0;
    if (words >> key && key == "UID_MIN" && words >> value && value > 0) {
      return static_cast<uid_t>(value);
    }
  }
  return 1000;
}

bool Allowed(std::string_view program) {
  for (std::string_view p : kPrograms) {
    if (p == program) return true;
  }
  return false;
}

// The environment the command gets: the caller's, without what steers the
// loader or the C library (glibc has already dropped most of it at this
// set-uid start; the command runs unprivileged, but as the user, whose
// files it must not be made to read by a library of the caller's choosing),
// with the user's own identity.
std::vector<std::string> CommandEnvironment(const passwd& pw) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    if (kv.starts_with("LD_") || kv.starts_with("GCONV_PATH=") || kv.starts_with("MALLOC_") ||
        kv.starts_with("GLIBC_TUNABLES=") || kv.starts_with("HOME=") || kv.starts_with("USER=") ||
        kv.starts_with("LOGNAME=") || kv.starts_with("HOSTALIASES=") ||
        kv.starts_with("LOCALDOMAIN=") || kv.starts_with("RES_OPTIONS=") ||
        kv.starts_with("NLSPATH=") || kv.starts_with("TMPDIR=")) {
      continue;
    }
    env.emplace_back(kv);
  }
  env.push_back(std::string("HOME=") + pw.pw_dir);
  env.push_back(std::string("USER=") + pw.pw_name);
  env.push_back(std::string("LOGNAME=") + pw.pw_name);
  return env;
}

// A slurm.conf names the plugins Slurm's commands load: one the caller
// wrote could make them run its own code as the user. SLURM_CONF, when
// set, must be root's: a regular file and its folder, neither writable by
// group or others. "" when it is; else why not.
std::string SlurmConfProblem() {
  const char* conf = std::getenv("SLURM_CONF");
  if (conf == nullptr) return "";
  const std::string path(conf);
  const std::string dir = path.find('/') == std::string::npos
                              ? "."
                              : path.substr(0, std::max<std::size_t>(1, path.rfind('/')));
  struct stat file {}, folder {};
  if (::stat(path.c_str(), &file) != 0 || !S_ISREG(file.st_mode) || file.st_uid != 0 ||
      (file.st_mode & 022) != 0 || ::stat(dir.c_str(), &folder) != 0 || folder.st_uid != 0 ||
      (folder.st_mode & 022) != 0) {
    return "SLURM_CONF " + path + " is not root's alone (a file and folder of root's, written by no one else)";
  }
  return "";
}

// Becomes the user for good: groups, gid, uid, checked.
int BecomeUser(const passwd& pw) {
  if (::initgroups(pw.pw_name, pw.pw_gid) != 0) {
    return Refuse(std::string("cannot take the groups of ") + pw.pw_name + ": " +
                  std::strerror(errno));
  }
  if (::setgid(pw.pw_gid) != 0 || ::setuid(pw.pw_uid) != 0) {
    return Refuse(std::string("cannot become ") + pw.pw_name + ": " + std::strerror(errno));
  }
  if (::setuid(0) == 0 || ::geteuid() != pw.pw_uid || ::getegid() != pw.pw_gid) {
    return Refuse("privileges were not dropped");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string user, cwd;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a == "--") {
      ++i;
      break;
    }
    if ((a == "--user" || a == "--cwd") && i + 1 < argc) {
      (a == "--user" ? user : cwd) = argv[++i];
      continue;
    }
    return Refuse("usage: skyslurmd-runas --user NAME [--cwd DIR] -- PROGRAM [ARGUMENT...]");
  }
  if (user.empty() || i >= argc) {
    return Refuse("usage: skyslurmd-runas --user NAME [--cwd DIR] -- PROGRAM [ARGUMENT...]");
  }
  const std::string program = argv[i];
  if (!Allowed(program)) return Refuse("runs Slurm's client commands only, not '" + program + "'");
  errno = 0;
  const passwd* found = ::getpwnam(user.c_str());
  if (found == nullptr) return Refuse("no user named '" + user + "'");
  passwd pw = *found;
  const std::string name = pw.pw_name, dir = pw.pw_dir;
  pw.pw_name = const_cast<char*>(name.c_str());
  pw.pw_dir = const_cast<char*>(dir.c_str());
  if (pw.pw_uid == 0 || pw.pw_gid == 0 || pw.pw_uid < LowestUserUid() || pw.pw_uid == 65534) {
    return Refuse("never acts as " + name + " (uid " + std::to_string(pw.pw_uid) +
                  "): a system account");
  }
  if (const std::string problem = SlurmConfProblem(); !problem.empty()) return Refuse(problem);
  if (int refused = BecomeUser(pw); refused != 0) return refused;
  // As the user from here on.
  if (::chdir(cwd.empty() ? "/" : cwd.c_str()) != 0) {
    return Refuse(name + " cannot work in " + cwd + ": " + std::strerror(errno));
  }
  const std::string path = std::string(SKYSLURM_RUNAS_SLURM_BIN_DIR) + "/" + program;
  std::vector<std::string> env = CommandEnvironment(pw);
  std::vector<char*> envp, args;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  args.push_back(const_cast<char*>(path.c_str()));
  for (int j = i + 1; j < argc; ++j) args.push_back(argv[j]);
  args.push_back(nullptr);
  ::execve(path.c_str(), args.data(), envp.data());
  return Refuse("cannot run " + path + ": " + std::strerror(errno));
}
