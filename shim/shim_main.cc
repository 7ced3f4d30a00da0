// The sbatch/salloc/srun shim. Installed once as skyslurm-shim, with sbatch,
// salloc and srun linked to it in a folder a site puts first on PATH.
//
// Without a --sky-* option it replaces itself with the real command (same
// argv, same environment): the only cost is one extra exec. It links nothing
// but the C and C++ runtimes for that reason.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "shim/real_command.h"

namespace {

// Whether the invocation asks skyslurm to route the job.
bool WantsRouting(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg == "--") break;
    if (arg.starts_with("--sky-")) return true;
  }
  const char* any = std::getenv("SKYSLURM_ANY_CLUSTER");
  return any != nullptr && *any != '\0' && std::strcmp(any, "0") != 0;
}

std::string SelfPath() {
  char buffer[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

int main(int argc, char** argv) {
  using skyslurm::shim::Mode;
  const char* argv0 = argc > 0 ? argv[0] : "sbatch";
  const auto mode = skyslurm::shim::ModeFromArgv0(argv0);
  if (!mode) {
    std::fprintf(stderr,
                 "skyslurm-shim: run me as sbatch, salloc or srun (through a link of that "
                 "name), not as '%s'\n",
                 argv0);
    return 1;
  }
  const std::string_view name = skyslurm::shim::ModeName(*mode);

  // A site may pin the real commands' folder; else PATH, skipping shims.
  const char* pinned = std::getenv("SKYSLURM_REAL_BIN_DIR");
  const char* path = (pinned != nullptr && *pinned != '\0') ? pinned : std::getenv("PATH");
  std::string why;
  const auto real = skyslurm::shim::FindRealCommand(name, path != nullptr ? path : "/usr/bin:/bin",
                                                    SelfPath(), &why);
  if (!real) {
    std::fprintf(stderr, "%.*s: error: skyslurm: cannot find the real %.*s: %s\n",
                 static_cast<int>(name.size()), name.data(), static_cast<int>(name.size()),
                 name.data(), why.c_str());
    return 1;
  }
  if (WantsRouting(argc, argv)) {
    std::fprintf(stderr,
                 "%.*s: error: skyslurm: routing across clusters (--sky-*) is not part of this "
                 "release yet\n",
                 static_cast<int>(name.size()), name.data());
    return 1;
  }
  execv(real->c_str(), argv);
  std::fprintf(stderr, "%.*s: error: skyslurm: cannot run %s: %s\n", static_cast<int>(name.size()),
               name.data(), real->c_str(), std::strerror(errno));
  return 1;
}
