#include "broker/cloud/ledger.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "broker/util/strings.h"
#include "broker/util/timestamp.h"

namespace skyslurm::cloud {
namespace {

// Fields of one CSV line as a billing export writes them: no quoting
// (node names, partitions and times never hold a comma), empties kept.
std::vector<std::string> Fields(std::string_view line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    out.push_back(Trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

// Seconds since the epoch, or RFC 3339; "" is 0 (not reached yet).
std::optional<std::time_t> ReadTime(const std::string& text) {
  if (text.empty()) return std::time_t{0};
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc() && end == text.data() + text.size() && value >= 0) return value;
  return ParseRfc3339(text);
}

}  // namespace

Result<std::vector<PowerUp>> ParseLedger(std::string_view text, std::string_view source) {
  std::vector<PowerUp> rows;
  std::map<std::string, std::size_t> column;
  std::size_t line_no = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string line = Trim(text.substr(start, end - start));
    start = end + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string> f = Fields(line);
    if (column.empty()) {
      for (std::size_t i = 0; i < f.size(); ++i) column[f[i]] = i;
      for (const char* needed : {"node", "requested", "ready", "down"}) {
        if (!column.contains(needed)) {
          return InvalidArgumentError(
              fmt::format("{}:{}: the header has no '{}' column (it needs node, requested, "
                          "ready and down; partition is optional)",
                          source, line_no, needed));
        }
      }
      continue;
    }
    auto field = [&](const char* name) -> std::string {
      auto it = column.find(name);
      return it == column.end() || it->second >= f.size() ? "" : f[it->second];
    };
    PowerUp row;
    row.node = field("node");
    row.partition = field("partition");
    if (row.node.empty()) {
      return InvalidArgumentError(fmt::format("{}:{}: no node name", source, line_no));
    }
    struct {
      const char* name;
      std::time_t* into;
    } times[] = {{"requested", &row.requested}, {"ready", &row.ready}, {"down", &row.down}};
    for (const auto& t : times) {
      const std::string value = field(t.name);
      auto parsed = ReadTime(value);
      if (!parsed) {
        return InvalidArgumentError(
            fmt::format("{}:{}: {}: '{}' is neither seconds since the epoch nor an RFC 3339 time",
                        source, line_no, t.name, value));
      }
      *t.into = *parsed;
    }
    if (row.requested == 0) {
      return InvalidArgumentError(
          fmt::format("{}:{}: {}: a power-up without its request time", source, line_no, row.node));
    }
    if ((row.ready != 0 && row.ready < row.requested) ||
        (row.down != 0 && row.down < row.requested)) {
      return InvalidArgumentError(fmt::format("{}:{}: {}: a time before the request ({})", source,
                                              line_no, row.node, row.requested));
    }
    rows.push_back(std::move(row));
  }
  if (column.empty() && line_no > 0) {
    return InvalidArgumentError(fmt::format("{}: no header line", source));
  }
  return rows;
}

std::optional<int> MeasuredBootSeconds(const std::vector<PowerUp>& ledger,
                                       std::string_view partition, std::size_t window) {
  auto boots = [&](bool any_partition) {
    std::vector<std::pair<std::time_t, int>> found;  // (ready, seconds)
    for (const auto& p : ledger) {
      if (p.ready == 0 || (!any_partition && p.partition != partition)) continue;
      found.emplace_back(p.ready, static_cast<int>(p.ready - p.requested));
    }
    return found;
  };
  std::vector<std::pair<std::time_t, int>> found = boots(false);
  if (found.empty()) found = boots(true);
  if (found.empty() || window == 0) return std::nullopt;
  // The latest boots: a provider's boot time drifts (new images, regions).
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (found.size() > window) {
    found.erase(found.begin(), found.end() - static_cast<std::ptrdiff_t>(window));
  }
  std::vector<int> seconds;
  for (const auto& f : found) seconds.push_back(f.second);
  std::sort(seconds.begin(), seconds.end());
  const std::size_t n = seconds.size();
  // The upper median: a boot estimate errs on the late side.
  return seconds[n / 2];
}

}  // namespace skyslurm::cloud
