#include "broker/cluster/hostlist.h"

#include <fmt/format.h>

#include <charconv>

namespace skyslurm::cluster {
namespace {

constexpr std::size_t kMaxHosts = 1'000'000;

Status Bad(std::string_view list, std::string_view why) {
  return InvalidArgumentError(fmt::format("invalid host list '{}': {}", list, why));
}

}  // namespace

Result<std::vector<std::string>> ExpandHostlist(std::string_view list) {
  std::vector<std::string> hosts;
  std::size_t p = 0;
  while (p < list.size()) {
    // One element: prefix[ranges]suffix, up to a comma outside brackets.
    std::size_t end = p;
    int depth = 0;
    while (end < list.size() && (depth > 0 || list[end] != ',')) {
      if (list[end] == '[') ++depth;
      if (list[end] == ']') --depth;
      if (depth < 0 || depth > 1) return Bad(list, "unbalanced brackets");
      ++end;
    }
    if (depth != 0) return Bad(list, "unbalanced brackets");
    const std::string_view element = list.substr(p, end - p);
    p = end + 1;
    if (element.empty()) continue;
    const auto open = element.find('[');
    if (open == std::string_view::npos) {
      hosts.emplace_back(element);
      continue;
    }
    const auto close = element.find(']', open);
    const std::string_view prefix = element.substr(0, open);
    const std::string_view ranges = element.substr(open + 1, close - open - 1);
    const std::string_view suffix = element.substr(close + 1);
    std::size_t r = 0;
    while (r <= ranges.size()) {
      auto comma = ranges.find(',', r);
      if (comma == std::string_view::npos) comma = ranges.size();
      const std::string_view range = ranges.substr(r, comma - r);
      r = comma + 1;
      const auto dash = range.find('-');
      const std::string_view lo_text = range.substr(0, dash);
      const std::string_view hi_text = dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
      unsigned long lo = 0, hi = 0;
      auto [p1, e1] = std::from_chars(lo_text.data(), lo_text.data() + lo_text.size(), lo);
      auto [p2, e2] = std::from_chars(hi_text.data(), hi_text.data() + hi_text.size(), hi);
      if (lo_text.empty() || e1 != std::errc() || e2 != std::errc() ||
          p1 != lo_text.data() + lo_text.size() || p2 != hi_text.data() + hi_text.size() ||
          hi < lo) {
        return Bad(list, fmt::format("bad range '{}'", range));
      }
      if (hi - lo > kMaxHosts || hosts.size() + (hi - lo) > kMaxHosts) {
        return Bad(list, "too many hosts");
      }
      const std::size_t width = lo_text.size();
      for (unsigned long n = lo; n <= hi; ++n) {
        hosts.push_back(fmt::format("{}{:0{}}{}", prefix, n, width, suffix));
      }
    }
  }
  return hosts;
}

}  // namespace skyslurm::cluster
