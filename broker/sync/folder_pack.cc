#include "broker/sync/folder_pack.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <filesystem>

#include "broker/sync/rsync.h"
#include "broker/util/strings.h"

namespace skyslurm::sync {

Result<std::string> PackFolder(CommandRunner& runner, const std::string& source,
                               std::chrono::milliseconds timeout) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                        "/skyslurm-pack-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return InternalError(fmt::format("packing {}: no private folder: {}", source, pattern));
  }
  const std::string stage = pattern;
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{stage};
  // What a copy would send, staged: the ignore files read as a copy reads them.
  std::vector<std::string> argv = {"rsync", "-rlpt"};
  for (auto& f : IgnoreFilters()) argv.push_back(std::move(f));
  argv.push_back(source + (source.ends_with('/') ? "" : "/"));
  argv.push_back(stage + "/");
  auto staged = runner.Run({.argv = argv, .timeout = timeout});
  if (!staged.ok()) return staged.status();
  if (!staged->success()) {
    return UnavailableError(
        fmt::format("packing {}: rsync failed ({}): {}", source, staged->DescribeEnd(),
                    Trim(staged->err)));
  }
  // Its entries, not "." itself: unpacking never touches the folder it
  // unpacks into (a pod's emptyDir, root's, where the job may not chmod).
  std::vector<std::string> tar = {"tar", "-czf", "-", "--owner=0", "--group=0", "--numeric-owner",
                                  "-C", stage, "--"};
  const std::size_t fixed = tar.size();
  for (const auto& e : std::filesystem::directory_iterator(stage)) {
    tar.push_back(e.path().filename().string());
  }
  if (tar.size() == fixed) return std::string();  // nothing to send
  auto packed = runner.Run({.argv = tar, .timeout = timeout});
  if (!packed.ok()) return packed.status();
  if (!packed->success()) {
    return UnavailableError(fmt::format("packing {}: tar failed ({}): {}", source,
                                        packed->DescribeEnd(), Trim(packed->err)));
  }
  return std::move(packed->out);
}

}  // namespace skyslurm::sync
