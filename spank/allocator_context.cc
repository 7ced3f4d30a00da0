// Allocator (sbatch, salloc) and local (srun) context: when the real
// command was run with a --sky-* option (the shim was not on PATH), hand the
// invocation to skyslurm's shim, which routes it. Never inside an
// allocation for srun (a routed job's steps see their options again), never
// twice (SKYSLURM_PLUGIN_REEXEC), never when skyslurm itself ran the real
// command (SKYSLURM_REAL_COMMAND_PID), and only when the script can be read again
// (a script read from stdin is gone: say so and stop).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "spank/context.h"

namespace skyslurm::spank {
namespace {

std::vector<std::string> OwnArgv() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string all = buf.str();
  std::vector<std::string> argv;
  std::size_t start = 0;
  while (start < all.size()) {
    const auto end = all.find('\0', start);
    argv.push_back(all.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return argv;
}

bool IsScriptFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st {};
  char head[2] = {0, 0};
  const bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, head, 2) == 2 &&
                  head[0] == '#' && head[1] == '!';
  close(fd);
  return ok;
}

}  // namespace

int HandToShim(spank_t sp) {
  PluginState& state = State();
  if (!state.sky_option_seen || !state.args.reexec) return 0;
  if (std::getenv("SKYSLURM_PLUGIN_REEXEC") != nullptr) return 0;
  // skyslurm itself ran this real command (its fallback, or a job it placed
  // here): routing is done.
  if (const char* pid = std::getenv("SKYSLURM_REAL_COMMAND_PID");
      pid != nullptr && std::to_string(getpid()) == pid) {
    return 0;
  }
  const spank_context_t ctx = spank_context();
  if (ctx == S_CTX_LOCAL && std::getenv("SLURM_JOB_ID") != nullptr) return 0;
  (void)sp;
  std::vector<std::string> argv = OwnArgv();
  if (argv.empty()) return 0;
  std::string program = argv[0].substr(argv[0].rfind('/') + 1);
  if (program != "sbatch" && program != "salloc" && program != "srun") return 0;
  if (program == "sbatch") {
    bool file = false, wrap = false;
    for (std::size_t i = 1; i < argv.size(); ++i) {
      wrap = wrap || argv[i].starts_with("--wrap");
      file = file || (!argv[i].starts_with("-") && IsScriptFile(argv[i]));
    }
    if (!file && !wrap) {
      slurm_error(
          "skyslurm: --sky-* options in a script read from standard input cannot be routed (it "
          "has been read already): submit the script as a file, e.g. sbatch job.sh");
      // Stop here: submitting it on this cluster instead would ignore what
      // the user asked for, and an optional plugin's -1 does not stop sbatch.
      std::exit(1);
    }
  }
  const std::string shim = state.args.shim_dir + "/" + program;
  if (access(shim.c_str(), X_OK) != 0) {
    slurm_info(
        "skyslurm: --sky-* asks to route this job, but skyslurm's shim is not installed at %s "
        "(plugstack.conf shim=); it is submitted on this cluster",
        shim.c_str());
    return 0;
  }
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  setenv("SKYSLURM_PLUGIN_REEXEC", "1", 1);
  execv(shim.c_str(), args.data());
  slurm_error("skyslurm: cannot run %s: %s; the job is submitted on this cluster", shim.c_str(),
              std::strerror(errno));
  unsetenv("SKYSLURM_PLUGIN_REEXEC");
  return 0;
}

}  // namespace skyslurm::spank
