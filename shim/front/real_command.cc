#include "shim/front/real_command.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

namespace skyslurm::shim {
namespace {

std::string_view Basename(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string RealPath(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : std::string();
}

}  // namespace

std::optional<Mode> ModeFromArgv0(std::string_view argv0) {
  const std::string_view name = Basename(argv0);
  if (name == "sbatch") return Mode::kSbatch;
  if (name == "salloc") return Mode::kSalloc;
  if (name == "srun") return Mode::kSrun;
  if (name == "squeue") return Mode::kSqueue;
  if (name == "sacct") return Mode::kSacct;
  if (name == "scontrol") return Mode::kScontrol;
  if (name == "scancel") return Mode::kScancel;
  return std::nullopt;
}

std::string_view ModeName(Mode mode) {
  switch (mode) {
    case Mode::kSbatch:
      return "sbatch";
    case Mode::kSalloc:
      return "salloc";
    case Mode::kSrun:
      return "srun";
    case Mode::kSqueue:
      return "squeue";
    case Mode::kSacct:
      return "sacct";
    case Mode::kScontrol:
      return "scontrol";
    case Mode::kScancel:
      return "scancel";
  }
  return "sbatch";
}

std::optional<std::string> FindRealCommand(std::string_view name, std::string_view search_path,
                                           std::string_view self, std::string* why) {
  std::string skipped;
  std::size_t start = 0;
  while (start <= search_path.size()) {
    std::size_t end = search_path.find(':', start);
    if (end == std::string_view::npos) end = search_path.size();
    std::string dir(search_path.substr(start, end - start));
    start = end + 1;
    // assign(1, '.'), not = ".": GCC 12 at -O3 reports a false -Wrestrict
    // inside the latter (GCC bug 105651).
    if (dir.empty()) dir.assign(1, '.');
    std::string candidate = dir;
    if (candidate.back() != '/') candidate += '/';
    candidate += name;
    if (!IsExecutableFile(candidate)) continue;
    const std::string real = RealPath(candidate);
    if (real.empty()) continue;
    if (real == self || Basename(real) == kShimFileName) {
      if (!skipped.empty()) skipped += ", ";
      skipped += candidate;
      continue;
    }
    return candidate;
  }
  if (why != nullptr) {
    *why = "no " + std::string(name) + " on PATH";
    if (!skipped.empty()) *why += " other than skyslurm's shim (" + skipped + ")";
  }
  return std::nullopt;
}

}  // namespace skyslurm::shim
