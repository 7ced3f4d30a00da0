#include "shim/cli/describe_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "broker/place/planner.h"
#include "shim/cli/cluster_views.h"

namespace skyslurm::cli {

int RunDescribe(const std::vector<std::string>& clusters) {
  auto ws = OpenWorkspace({});
  if (!ws.ok()) {
    std::fprintf(stderr, "skyslurm describe: %s\n", ws.status().message().c_str());
    return 2;
  }
  for (const auto& name : clusters) {
    if (ws->registry.Find(name) == nullptr) {
      std::fprintf(stderr, "skyslurm describe: no cluster named '%s'\n", name.c_str());
      return 2;
    }
  }
  auto wanted = [&](const std::string& name) {
    return clusters.empty() || std::find(clusters.begin(), clusters.end(), name) != clusters.end();
  };
  for (auto& h : ws->handles) {
    if (!wanted(h.name)) h.excluded = "not asked for";
  }
  const auto results = place::ProbeAll(ws->handles, std::chrono::seconds(15));
  int status = 0;
  bool first = true;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!wanted(results[i].name)) continue;
    if (!results[i].inventory) {
      std::fprintf(stderr, "skyslurm describe: %s: %s\n", results[i].name.c_str(),
                   results[i].unreachable.c_str());
      status = 1;
      continue;
    }
    if (!first) std::fputs("---\n", stdout);
    first = false;
    std::fputs(cluster::DescriptionToYaml(results[i].inventory->description).c_str(), stdout);
  }
  return status;
}

}  // namespace skyslurm::cli
