#include "broker/cloud/node_time.h"

#include <algorithm>

namespace skyslurm::cloud {
namespace {

struct Span {
  const std::string* job;
  std::time_t start, end;
};

}  // namespace

std::map<std::string, double> AttributeNodeSeconds(const std::vector<PowerUp>& ledger,
                                                   const std::vector<NodeUse>& uses,
                                                   std::time_t now, std::time_t since) {
  std::map<std::string, double> charged;
  for (const PowerUp& up : ledger) {
    const std::time_t from = up.requested;
    const std::time_t to = up.down != 0 ? up.down : std::max(now, from);
    if (to <= from || to <= since) continue;
    // The jobs on this node within this power-up, clipped to it.
    std::vector<Span> spans;
    for (const NodeUse& u : uses) {
      if (std::find(u.nodes.begin(), u.nodes.end(), up.node) == u.nodes.end()) continue;
      const std::time_t s = std::max(u.start, from);
      const std::time_t e = std::min(u.end != 0 ? u.end : now, to);
      // A job that ended the second it started (Slurm's accounting counts
      // whole seconds) still caused its node's boot and tail.
      if (u.start == 0 || e < s || (e == s && u.start < from)) continue;
      spans.push_back({&u.job_id, s, e});
    }
    if (spans.empty()) {
      charged[""] += static_cast<double>(to - std::max(from, since));
      continue;
    }
    std::vector<std::time_t> cuts = {from, to};
    for (const Span& s : spans) {
      cuts.push_back(s.start);
      cuts.push_back(s.end);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      const std::time_t t0 = cuts[i], t1 = cuts[i + 1];
      if (t1 <= since) continue;
      std::vector<const std::string*> owners;
      for (const Span& s : spans) {
        if (s.start <= t0 && s.end >= t1) owners.push_back(s.job);
      }
      if (owners.empty()) {
        // Idle: the ones that ended last before, else the first to start after.
        std::time_t last_end = 0;
        for (const Span& s : spans) {
          if (s.end <= t0) last_end = std::max(last_end, s.end);
        }
        if (last_end != 0) {
          for (const Span& s : spans) {
            if (s.end == last_end) owners.push_back(s.job);
          }
        } else {
          std::time_t first_start = to;
          for (const Span& s : spans) {
            if (s.start >= t1) first_start = std::min(first_start, s.start);
          }
          for (const Span& s : spans) {
            if (s.start == first_start) owners.push_back(s.job);
          }
        }
      }
      const double share =
          static_cast<double>(t1 - std::max(t0, since)) / static_cast<double>(owners.size());
      for (const std::string* job : owners) charged[*job] += share;
    }
  }
  return charged;
}

}  // namespace skyslurm::cloud
