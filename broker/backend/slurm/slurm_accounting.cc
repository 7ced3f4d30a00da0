#include "broker/backend/slurm/slurm_accounting.h"

#include <fmt/format.h>

#include "broker/cluster/hostlist.h"
#include "broker/util/strings.h"
#include "broker/util/timestamp.h"

namespace skyslurm::backend {
namespace {

// "a||b" -> a, "", b: sacct's fields, empty ones kept.
std::vector<std::string> Fields(std::string_view line) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (;;) {
    const std::size_t bar = line.find('|', from);
    out.emplace_back(line.substr(from, bar == std::string_view::npos ? bar : bar - from));
    if (bar == std::string_view::npos) return out;
    from = bar + 1;
  }
}

}  // namespace

std::vector<std::string> SacctNodeUseArgs(std::time_t since) {
  // -S with no -s: every job eligible or running from then on; a day more
  // so that a node's boot before `since` finds the job it was booted for.
  const std::string start = FormatUtcTimestamp(since > 86400 ? since - 86400 : 0);
  return {"-X",  "-a", "-n",  "-P", "-S",
          start, "-E", "now", "-o", "JobIDRaw,User,NodeList,Start,End"};
}

Result<std::vector<cloud::NodeUse>> ParseSacctNodeUses(std::string_view text) {
  std::vector<cloud::NodeUse> uses;
  std::size_t line_no = 0;
  for (const std::string& raw : SplitList(text, '\n')) {
    ++line_no;
    const std::string line = Trim(raw);
    if (line.empty()) continue;
    const std::vector<std::string> f = Fields(line);
    if (f.size() != 5) {
      return InvalidArgumentError(fmt::format(
          "sacct line {}: expected JobIDRaw|User|NodeList|Start|End, got '{}'", line_no, line));
    }
    const std::optional<std::time_t> start = ParseUtcTimestamp(f[3]);
    if (!start || f[2].empty() || f[2] == "None assigned" || f[2] == "(null)") continue;
    auto nodes = cluster::ExpandHostlist(f[2]);
    if (!nodes.ok()) {
      return InvalidArgumentError(fmt::format("sacct line {}: node list '{}': {}", line_no, f[2],
                                              nodes.status().message()));
    }
    cloud::NodeUse use;
    use.job_id = f[0];
    use.user = f[1];
    use.nodes = std::move(*nodes);
    use.start = *start;
    use.end = ParseUtcTimestamp(f[4]).value_or(0);
    uses.push_back(std::move(use));
  }
  return uses;
}

}  // namespace skyslurm::backend
