// The sbatch/salloc/srun shim, and squeue/sacct/scontrol/scancel's.
// Installed once as skyslurm-shim, with each command's name linked to it in
// a folder a site puts first on PATH.
//
// Without a --sky-* option it replaces itself with the real command (same
// argv, same environment): the only cost is one extra exec. It links nothing
// but the C and C++ runtimes for that reason. When routing is asked for
// (route_command.h says how) it hands the invocation to
// `skyslurm __route MODE ARGS...`, or, for a batch job when the user's
// skyslurmd is up, straight to the daemon's socket (daemon_handoff.h).
// squeue, sacct, scontrol and scancel go to the daemon only when a routed
// job is involved (daemon_handoff.h: InvolvesRoutedJobs), through
// `skyslurm __slurm MODE ARGS...` when no daemon runs yet.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "broker/job/argv_parser.h"
#include "shim/front/daemon_handoff.h"
#include "shim/front/real_command.h"

namespace {

bool Truthy(const char* v) { return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0; }

// Whether a batch script's #SBATCH header asks for routing: the first
// argument that is a readable file starting with "#!" is the script. Only
// its header (up to the first command) is read, and only the first 64 KiB.
bool ScriptAsksForRouting(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-' || argv[i][0] == '\0') continue;
    const int fd = open(argv[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) continue;
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      continue;
    }
    char buf[65536];
    const ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    if (n < 2 || buf[0] != '#' || buf[1] != '!') continue;
    const std::string_view text(buf, static_cast<std::size_t>(n));
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view line = text.substr(start, end - start);
      start = end + 1;
      if (line.starts_with("#SBATCH")) {
        if (line.find("--sky-") != std::string_view::npos) return true;
        continue;
      }
      const auto first = line.find_first_not_of(" \t\r");
      if (first != std::string_view::npos && line[first] != '#') break;  // the first command
    }
    return false;  // the script, without --sky-* lines
  }
  return false;
}

// Whether the invocation asks skyslurm to route the job: a --sky-* option
// among the command's own options (not the script's or the program's
// arguments), SKYSLURM_ANY_CLUSTER, an #SBATCH --sky-* line, or the plugin
// handing the real command's invocation over.
bool WantsRouting(skyslurm::shim::Mode mode, int argc, char** argv) {
  using skyslurm::shim::Mode;
  if (std::getenv("SKYSLURM_PLUGIN_REEXEC") != nullptr) return true;
  // Inside an allocation srun starts steps of that allocation: never routed
  // (a routed job sees its own --sky-* options again through the plugin).
  if (mode == Mode::kSrun && std::getenv("SLURM_JOB_ID") != nullptr) return false;
  const auto tool = mode == Mode::kSbatch   ? skyslurm::job::Tool::kSbatch
                    : mode == Mode::kSalloc ? skyslurm::job::Tool::kSalloc
                                            : skyslurm::job::Tool::kSrun;
  const skyslurm::job::OptionTable table(tool);
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed =
      skyslurm::job::ParseArgs(table, args, skyslurm::job::OperandPolicy::kStopAtFirst, "");
  if (!parsed.ok()) return false;  // the real command says what is wrong
  for (const auto& o : parsed->options) {
    if (o.spec != nullptr && skyslurm::job::SkyOptionOf(o.spec->id)) {
      return true;
    }
  }
  if (Truthy(std::getenv("SKYSLURM_ANY_CLUSTER"))) return true;
  return mode == Mode::kSbatch && ScriptAsksForRouting(argc, argv);
}

std::string SelfPath() {
  char buffer[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

// The `skyslurm` command that routes: SKYSLURM_ROUTER, else beside this
// binary (a build tree), else <prefix>/bin/skyslurm from
// <prefix>/libexec/skyslurm/skyslurm-shim.
std::string RouterPath(const std::string& self) {
  if (const char* r = std::getenv("SKYSLURM_ROUTER"); r != nullptr && *r != '\0') return r;
  const std::string dir = self.substr(0, self.rfind('/'));
  for (const std::string& candidate : {dir + "/skyslurm", dir + "/../../bin/skyslurm"}) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  using skyslurm::shim::Mode;
  timespec started{};
  clock_gettime(CLOCK_MONOTONIC, &started);  // the trace's origin (SKYSLURM_TRACE)
  const char* argv0 = argc > 0 ? argv[0] : "sbatch";
  const auto mode = skyslurm::shim::ModeFromArgv0(argv0);
  if (!mode) {
    std::fprintf(stderr,
                 "skyslurm-shim: run me as sbatch, salloc, srun, squeue, sacct, scontrol or "
                 "scancel (through a link of that name), not as '%s'\n",
                 argv0);
    return 1;
  }
  const std::string_view name = skyslurm::shim::ModeName(*mode);

  // A site may pin the real commands' folder; else PATH, skipping shims.
  const char* pinned = std::getenv("SKYSLURM_REAL_BIN_DIR");
  const char* path = (pinned != nullptr && *pinned != '\0') ? pinned : std::getenv("PATH");
  const std::string self = SelfPath();
  if (skyslurm::shim::IsClientMode(*mode) &&
      skyslurm::shim::InvolvesRoutedJobs(*mode, argc, argv)) {
    const skyslurm::shim::Handoff handoff = skyslurm::shim::RunClientOnDaemon(*mode, argc, argv);
    if (handoff.done) return handoff.exit_code;
    const std::string router = RouterPath(self);
    if (!router.empty()) {
      std::vector<char*> args = {const_cast<char*>("skyslurm"), const_cast<char*>("__slurm"),
                                 const_cast<char*>(name.data())};
      for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
      args.push_back(nullptr);
      execv(router.c_str(), args.data());
    }
    // No skyslurm to start the daemon with: the real command, as typed.
  } else if (!skyslurm::shim::IsClientMode(*mode) && WantsRouting(*mode, argc, argv)) {
    const std::string router = RouterPath(self);
    if (router.empty()) {
      std::fprintf(stderr,
                   "%.*s: error: skyslurm: cannot find the skyslurm command to route this job "
                   "(set SKYSLURM_ROUTER)\n",
                   static_cast<int>(name.size()), name.data());
      return 1;
    }
    const long long started_ns =
        static_cast<long long>(started.tv_sec) * 1'000'000'000 + started.tv_nsec;
    // The daemon's socket first: no second program when it is up.
    const skyslurm::shim::Handoff handoff =
        skyslurm::shim::SubmitToDaemon(*mode, argc, argv, started_ns);
    if (handoff.done) return handoff.exit_code;
    if (!handoff.sent_sky_id.empty()) setenv("SKYSLURM_SKY_ID", handoff.sent_sky_id.c_str(), 1);
    if (Truthy(std::getenv("SKYSLURM_TRACE"))) {
      setenv("SKYSLURM_TRACE_START", std::to_string(started_ns).c_str(), 1);
    }
    std::vector<char*> args = {const_cast<char*>("skyslurm"), const_cast<char*>("__route"),
                               const_cast<char*>(name.data())};
    for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    execv(router.c_str(), args.data());
    std::fprintf(stderr, "%.*s: error: skyslurm: cannot run %s: %s\n",
                 static_cast<int>(name.size()), name.data(), router.c_str(), std::strerror(errno));
    return 1;
  }
  std::string why;
  const auto real =
      skyslurm::shim::FindRealCommand(name, path != nullptr ? path : "/usr/bin:/bin", self, &why);
  if (!real) {
    std::fprintf(stderr, "%.*s: error: skyslurm: cannot find the real %.*s: %s\n",
                 static_cast<int>(name.size()), name.data(), static_cast<int>(name.size()),
                 name.data(), why.c_str());
    return 1;
  }
  execv(real->c_str(), argv);
  std::fprintf(stderr, "%.*s: error: skyslurm: cannot run %s: %s\n", static_cast<int>(name.size()),
               name.data(), real->c_str(), std::strerror(errno));
  return 1;
}
