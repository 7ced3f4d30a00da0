#include "broker/daemon/slurm_text.h"

#include <fmt/format.h>

#include <regex>
#include <vector>

#include "broker/job/global_id.h"

namespace skyslurm::daemon {
namespace {

// Markers no format or value of Slurm's holds: ASCII's unit, group and
// record separators.
constexpr char kOpen = '\x1f';
constexpr char kSpecEnd = '\x1d';
constexpr char kClose = '\x1e';

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// A value printed as a field of `width` (0: as it is), right-justified or
// not, cut to the width as Slurm's fixed columns cut it.
std::string Fit(std::string value, int width, bool right) {
  if (width <= 0) return value;
  const auto w = static_cast<std::size_t>(width);
  if (value.size() > w) value.resize(w);
  const std::string pad(w - value.size(), ' ');
  return right ? pad + value : value + pad;
}

}  // namespace

std::string MapIdValue(std::string_view value, const IdMap& map) {
  const auto word = SplitJobIdWord(value);
  if (!word) return std::string(value);
  const auto it = map.find(std::string_view(value).substr(0, value.size() - word->rest.size()));
  if (it == map.end()) return std::string(value);
  return std::to_string(it->second) + word->rest;
}

std::string SqueueDefaultFormat(bool long_format) {
  return long_format ? "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
                     : "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
}

std::string MarkSqueueFormat(std::string_view format) {
  std::string out;
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    std::size_t j = i + 1;
    if (j < format.size() && format[j] == '%') {  // a literal '%'
      out += "%%";
      i = j;
      continue;
    }
    const std::size_t spec_start = j;
    if (j < format.size() && format[j] == '.') ++j;
    while (j < format.size() && format[j] >= '0' && format[j] <= '9') ++j;
    if (j >= format.size()) {
      out += format.substr(i);
      break;
    }
    const char type = format[j];
    const std::string_view spec = format.substr(spec_start, j - spec_start);
    if (type == 'i' || type == 'A' || type == 'F') {
      out += kOpen;
      out += spec;
      out += kSpecEnd;
      out += '%';
      out += type;
      out += kClose;
    } else {
      out += format.substr(i, j - i + 1);
    }
    i = j;
  }
  return out;
}

std::string UnmarkSqueueOutput(std::string_view out, const IdMap& map) {
  std::string result;
  std::size_t i = 0;
  while (i < out.size()) {
    const std::size_t open = out.find(kOpen, i);
    if (open == std::string_view::npos) {
      result += out.substr(i);
      break;
    }
    result += out.substr(i, open - i);
    const std::size_t spec_end = out.find(kSpecEnd, open);
    const std::size_t close =
        spec_end == std::string_view::npos ? std::string_view::npos : out.find(kClose, spec_end);
    if (close == std::string_view::npos) {  // cut short: keep the rest as it is
      result += out.substr(open + 1);
      break;
    }
    std::string_view spec = out.substr(open + 1, spec_end - open - 1);
    const bool right = spec.starts_with('.');
    if (right) spec.remove_prefix(1);
    int width = 0;
    for (const char c : spec) width = width * 10 + (c - '0');
    std::string_view value = out.substr(spec_end + 1, close - spec_end - 1);
    // The header's name, or a value: trailing blanks of a value printed
    // without width are not ours to keep.
    while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    result += Fit(MapIdValue(value, map), width, right);
    i = close + 1;
  }
  return result;
}

std::string MapSacctOutput(std::string_view out, bool parsable, const IdMap& map) {
  const std::vector<std::string_view> lines = Lines(out);
  if (lines.empty()) return std::string(out);
  std::string result;
  const bool ends_with_newline = out.ends_with('\n');
  auto is_id = [](std::string_view name) {
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    return name == "JobID" || name == "JobIDRaw";
  };
  if (parsable) {
    std::vector<bool> id_column;
    std::size_t start = 0;
    const std::string_view header = lines[0];
    while (true) {
      const std::size_t bar = header.find('|', start);
      id_column.push_back(
          is_id(header.substr(start, bar == std::string_view::npos ? bar : bar - start)));
      if (bar == std::string_view::npos) break;
      start = bar + 1;
    }
    for (std::size_t l = 0; l < lines.size(); ++l) {
      std::string_view line = lines[l];
      std::size_t field = 0, from = 0;
      while (true) {
        const std::size_t bar = line.find('|', from);
        const std::string_view value =
            line.substr(from, bar == std::string_view::npos ? std::string_view::npos : bar - from);
        result += l > 0 && field < id_column.size() && id_column[field] ? MapIdValue(value, map)
                                                                        : std::string(value);
        if (bar == std::string_view::npos) break;
        result += '|';
        from = bar + 1;
        ++field;
      }
      if (l + 1 < lines.size() || ends_with_newline) result += '\n';
    }
    return result;
  }
  if (lines.size() < 2) return std::string(out);
  // Columns from the line of dashes: "------------ ---------- --------".
  struct Column {
    std::size_t start, width;
    bool id;
  };
  std::vector<Column> columns;
  const std::string_view dashes = lines[1];
  for (std::size_t p = 0; p < dashes.size();) {
    if (dashes[p] != '-') {
      ++p;
      continue;
    }
    std::size_t e = p;
    while (e < dashes.size() && dashes[e] == '-') ++e;
    const std::string_view name = p < lines[0].size() ? lines[0].substr(p, e - p) : "";
    columns.push_back({p, e - p, is_id(name)});
    p = e;
  }
  for (std::size_t l = 0; l < lines.size(); ++l) {
    std::string line(lines[l]);
    if (l >= 2) {
      for (const Column& c : columns) {
        if (!c.id || c.start >= line.size()) continue;
        const std::string_view cell = std::string_view(line).substr(c.start, c.width);
        const std::size_t first = cell.find_first_not_of(' ');
        if (first == std::string_view::npos) continue;
        const std::size_t last = cell.find_last_not_of(' ');
        const std::string_view value = cell.substr(first, last - first + 1);
        if (value.ends_with('+')) continue;  // already cut by sacct: not an id to read
        std::string mapped = MapIdValue(value, map);
        if (mapped.size() > c.width) mapped = mapped.substr(0, c.width - 1) + "+";  // as sacct cuts
        const bool right = first > 0;
        std::string fitted = Fit(mapped, static_cast<int>(c.width), right);
        line.replace(c.start, std::min(c.width, line.size() - c.start), fitted);
      }
    }
    result += line;
    if (l + 1 < lines.size() || ends_with_newline) result += '\n';
  }
  return result;
}

std::string MapScontrolOutput(std::string_view out, const IdMap& map) {
  static const std::regex kId(R"(\b(JobId|ArrayJobId|HetJobId)=([0-9]+))");
  std::string result;
  const std::string text(out);
  auto begin = std::sregex_iterator(text.begin(), text.end(), kId);
  std::size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    const auto at = static_cast<std::size_t>(m.position(0));
    result += text.substr(last, at - last);
    result += m[1].str() + "=" + MapIdValue(m[2].str(), map);
    last = at + static_cast<std::size_t>(m.length(0));
  }
  result += text.substr(last);
  return result;
}

std::string DropLines(std::string_view text, int lines) {
  std::size_t at = 0;
  for (int k = 0; k < lines && at < text.size(); ++k) {
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) return "";
    at = nl + 1;
  }
  return std::string(text.substr(at));
}

}  // namespace skyslurm::daemon
