#include "shim/cli/describe_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "shim/cli/cluster_views.h"

namespace skyslurm::cli {

int RunDescribe(const std::vector<std::string>& clusters) {
  auto ws = OpenWorkspace({});
  if (!ws.ok()) {
    std::fprintf(stderr, "skyslurm describe: %s\n", ws.status().message().c_str());
    return 2;
  }
  int status = 0;
  bool first = true;
  for (const auto& name : clusters) {
    if (ws->registry.Find(name) == nullptr) {
      std::fprintf(stderr, "skyslurm describe: no cluster named '%s'\n", name.c_str());
      return 2;
    }
  }
  for (const auto& view : ws->views) {
    if (!clusters.empty() &&
        std::find(clusters.begin(), clusters.end(), view.entry->name) == clusters.end()) {
      continue;
    }
    if (!view.description) {
      std::fprintf(stderr, "skyslurm describe: %s: %s\n", view.entry->name.c_str(),
                   view.unavailable.c_str());
      status = 1;
      continue;
    }
    if (!first) std::fputs("---\n", stdout);
    first = false;
    std::fputs(cluster::DescriptionToYaml(*view.description).c_str(), stdout);
  }
  return status;
}

}  // namespace skyslurm::cli
