#include "broker/daemon/slurm_front/slurm_text.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <optional>
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
// Before each of the two fields a held squeue line ends with (its id, its
// state), which the user does not see: ASCII's file separator.
constexpr char kTrack = '\x1c';

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

// The word shown for an unsettled job's ended state.
constexpr std::string_view kHeldState = "COMPLETING";

// Whether `value` (an id as a cluster printed it) names an unsettled job
// itself: its number alone, not a step or a task.
bool HeldId(std::string_view value, const Unsettled& unsettled) {
  if (unsettled.empty()) return false;
  const auto word = SplitJobIdWord(value);
  return word && word->rest.empty() && unsettled.contains(value);
}

std::string_view Trimmed(std::string_view v) {
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  return v;
}

}  // namespace

bool IsEndedSlurmState(std::string_view state) {
  static constexpr std::string_view kEnded[] = {"COMPLETED", "FAILED",    "CANCELLED",
                                                "TIMEOUT",   "NODE_FAIL", "OUT_OF_MEMORY",
                                                "BOOT_FAIL", "DEADLINE",  "PREEMPTED"};
  state = Trimmed(state);
  state = state.substr(0, state.find(' '));  // "CANCELLED by 0"
  // sacct cuts a value wider than its column with '+': "OUT_OF_ME+".
  const bool cut = state.ends_with('+');
  if (cut) state.remove_suffix(1);
  if (state.empty()) return false;
  for (const std::string_view ended : kEnded) {
    if (cut ? ended.starts_with(state) : ended == state) return true;
  }
  return false;
}

std::string MapIdValue(std::string_view value, const IdMap& map) {
  const auto word = SplitJobIdWord(value);
  if (!word) return std::string(value);
  const auto it = map.find(std::string_view(value).substr(0, value.size() - word->rest.size()));
  if (it == map.end()) return std::string(value);
  return std::to_string(it->second) + word->rest;
}

std::string SqueueDefaultFormat(bool long_format, bool steps) {
  if (steps) return "%.15i %.8j %.9P %.8u %.9M %N";
  return long_format ? "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
                     : "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
}

std::string MarkSqueueFormat(std::string_view format, bool steps, bool track) {
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
    const bool state = track && !steps && (type == 't' || type == 'T');
    if (type == 'i' || (!steps && (type == 'A' || type == 'F')) || state) {
      out += kOpen;
      if (state) out += type;  // a state field: "t.2"
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
  if (track && !steps) out += std::string(1, kTrack) + "%i" + kTrack + "%T";
  return out;
}

namespace {

// One line (or several: a run of text) of squeue's marked output, the
// fields unmarked; when `held`, a state field shows CG (%t) or COMPLETING
// (%T).
std::string UnmarkFields(std::string_view out, const IdMap& map, bool held) {
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
    const char state = spec.starts_with('t') || spec.starts_with('T') ? spec.front() : '\0';
    if (state != '\0') spec.remove_prefix(1);
    const bool right = spec.starts_with('.');
    if (right) spec.remove_prefix(1);
    int width = 0;
    for (const char c : spec) width = width * 10 + (c - '0');
    std::string_view value = out.substr(spec_end + 1, close - spec_end - 1);
    // The header's name, or a value: trailing blanks of a value printed
    // without width are not ours to keep.
    while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    if (state != '\0') {
      const std::string_view shown = !held ? value : state == 't' ? "CG" : kHeldState;
      result += Fit(std::string(shown), width, right);
    } else {
      result += Fit(MapIdValue(value, map), width, right);
    }
    i = close + 1;
  }
  return result;
}

}  // namespace

std::string UnmarkSqueueOutput(std::string_view out, const IdMap& map, const SqueueHold* hold) {
  if (hold == nullptr || out.find(kTrack) == std::string_view::npos) {
    return UnmarkFields(out, map, false);
  }
  std::string result;
  for (std::size_t at = 0; at < out.size();) {
    std::size_t eol = out.find('\n', at);
    eol = eol == std::string_view::npos ? out.size() : eol + 1;
    std::string_view line = out.substr(at, eol - at);
    at = eol;
    const bool newline = line.ends_with('\n');
    if (newline) line.remove_suffix(1);
    bool held = false;
    if (const std::size_t id_at = line.find(kTrack); id_at != std::string_view::npos) {
      const std::size_t state_at = line.find(kTrack, id_at + 1);
      const std::string_view id = Trimmed(line.substr(id_at + 1, state_at - id_at - 1));
      const std::string_view state =
          state_at == std::string_view::npos ? "" : line.substr(state_at + 1);
      line = line.substr(0, id_at);
      const bool ended = IsEndedSlurmState(state);
      held = ended && HeldId(id, *hold->unsettled);
      // Listed only because its states were widened to find the held ones.
      if (ended && !held && hold->drop_ended) continue;
    }
    result += UnmarkFields(line, map, held);
    if (newline) result += '\n';
  }
  return result;
}

MarkedSqueueFields MarkSqueueFields(std::string_view spec) {
  MarkedSqueueFields m;
  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t comma = spec.find(',', start);
    if (comma == std::string_view::npos) comma = spec.size();
    const std::string_view token = spec.substr(start, comma - start);
    start = comma + 1;
    if (token.empty()) {
      if (comma == spec.size()) break;
      continue;
    }
    SqueueField f;
    const std::size_t colon = token.find(':');
    const std::string_view type = token.substr(0, colon);
    std::string lower;
    for (const char c : type)
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    f.id = lower == "jobid" || lower == "jobarrayid" || lower == "arrayjobid";
    std::string_view size_text;
    if (colon != std::string_view::npos) {
      std::string_view rest = token.substr(colon + 1);
      if (rest.starts_with('.')) {
        f.right = true;
        rest.remove_prefix(1);
      }
      std::size_t digits = 0;
      while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
      size_text = rest.substr(0, digits);
      // "Field:" and "Field:0" print the value whole.
      f.width = 0;
      if (!size_text.empty() &&
          std::from_chars(size_text.data(), size_text.data() + size_text.size(), f.width).ec !=
              std::errc()) {
        f.width = 0;
      }
      f.suffix = std::string(rest.substr(digits));
    }
    if (!m.format.empty()) m.format += ',';
    if (f.id) {
      // Whole: no padding, no cut (size 0), the marker right after it.
      m.format += std::string(type) + ":0" + kClose + f.suffix;
    } else if (colon == std::string_view::npos) {
      // "Field:" alone would be read as size 0: its default size, said.
      m.format += fmt::format("{}:{}{}", type, kSqueueFieldWidth, kClose);
    } else {
      m.format += std::string(token) + kClose;  // as given, the marker after its suffix
    }
    m.fields.push_back(std::move(f));
    if (comma == spec.size()) break;
  }
  return m;
}

std::string UnmarkSqueueFields(std::string_view out, const MarkedSqueueFields& marked,
                               const IdMap& map) {
  std::string result;
  for (const std::string_view line : Lines(out)) {
    std::size_t from = 0;
    for (std::size_t i = 0; from <= line.size(); ++i) {
      const std::size_t mark = line.find(kClose, from);
      if (mark == std::string_view::npos) {
        result += line.substr(from);
        break;
      }
      std::string_view field = line.substr(from, mark - from);
      from = mark + 1;
      if (i >= marked.fields.size() || !marked.fields[i].id) {
        result += field;
        continue;
      }
      // An id field: the value printed whole, then the marker, then its suffix.
      const SqueueField& f = marked.fields[i];
      std::string_view suffix = line.substr(from);
      suffix = suffix.substr(0, std::min(f.suffix.size(), suffix.size()));
      from += suffix.size();
      result += Fit(MapIdValue(field, map), f.width, f.right);
      result += suffix;
    }
    result += '\n';
  }
  if (!out.ends_with('\n') && !result.empty()) result.pop_back();
  return result;
}

std::string MapSacctOutput(std::string_view out, bool parsable, const IdMap& map,
                           const Unsettled& unsettled, bool all_unsettled) {
  const std::vector<std::string_view> lines = Lines(out);
  if (lines.empty()) return std::string(out);
  std::string result;
  const bool ends_with_newline = out.ends_with('\n');
  auto is_id = [](std::string_view name) {
    name = Trimmed(name);
    return name == "JobID" || name == "JobIDRaw";
  };
  auto is_state = [](std::string_view name) { return Trimmed(name) == "State"; };
  auto fields_of = [](std::string_view line) {
    std::vector<std::string_view> fields;
    std::size_t from = 0;
    while (true) {
      const std::size_t bar = line.find('|', from);
      fields.push_back(
          line.substr(from, bar == std::string_view::npos ? std::string_view::npos : bar - from));
      if (bar == std::string_view::npos) break;
      from = bar + 1;
    }
    return fields;
  };
  if (parsable) {
    const std::vector<std::string_view> header = fields_of(lines[0]);
    std::optional<std::size_t> first_id, state;
    for (std::size_t f = 0; f < header.size(); ++f) {
      if (is_id(header[f]) && !first_id) first_id = f;
      if (is_state(header[f]) && !state) state = f;
    }
    for (std::size_t l = 0; l < lines.size(); ++l) {
      const std::vector<std::string_view> fields = fields_of(lines[l]);
      const bool whose = first_id
                             ? *first_id < fields.size() && HeldId(fields[*first_id], unsettled)
                             : all_unsettled;
      const bool held =
          l > 0 && state && *state < fields.size() && whose && IsEndedSlurmState(fields[*state]);
      for (std::size_t f = 0; f < fields.size(); ++f) {
        if (f > 0) result += '|';
        if (l > 0 && f < header.size() && is_id(header[f])) {
          result += MapIdValue(fields[f], map);
        } else if (held && f == *state) {
          result += kHeldState;
        } else {
          result += fields[f];
        }
      }
      if (l + 1 < lines.size() || ends_with_newline) result += '\n';
    }
    return result;
  }
  if (lines.size() < 2) return std::string(out);
  // Columns from the line of dashes: "------------ ---------- --------".
  struct Column {
    std::size_t start, width;
    bool id, state;
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
    columns.push_back({p, e - p, is_id(name), is_state(name)});
    p = e;
  }
  // A cell's value (blanks around it dropped), and whether it is right-justified.
  auto cell_of = [](std::string_view line, const Column& c) {
    const std::string_view cell = line.substr(c.start, c.width);
    const std::size_t first = cell.find_first_not_of(' ');
    if (first == std::string_view::npos) return std::pair<std::string_view, bool>{"", false};
    const std::size_t last = cell.find_last_not_of(' ');
    return std::pair{cell.substr(first, last - first + 1), first > 0};
  };
  // `value` in place of the cell, cut as sacct cuts what is wider.
  auto put = [](std::string& line, const Column& c, std::string value, bool right) {
    if (value.size() > c.width) value = value.substr(0, c.width - 1) + "+";
    line.replace(c.start, std::min(c.width, line.size() - c.start),
                 Fit(std::move(value), static_cast<int>(c.width), right));
  };
  const Column* first_id = nullptr;
  const Column* state = nullptr;
  for (const Column& c : columns) {
    if (c.id && first_id == nullptr) first_id = &c;
    if (c.state && state == nullptr) state = &c;
  }
  for (std::size_t l = 0; l < lines.size(); ++l) {
    std::string line(lines[l]);
    if (l >= 2 && state != nullptr && state->start < line.size()) {
      const bool whose = first_id != nullptr ? first_id->start < line.size() &&
                                                   HeldId(cell_of(line, *first_id).first, unsettled)
                                             : all_unsettled;
      const auto [value, right] = cell_of(line, *state);
      if (whose && IsEndedSlurmState(value)) put(line, *state, std::string(kHeldState), right);
    }
    if (l >= 2) {
      for (const Column& c : columns) {
        if (!c.id || c.start >= line.size()) continue;
        const auto [value, right] = cell_of(line, c);
        if (value.empty()) continue;
        if (value.ends_with('+')) continue;  // already cut by sacct: not an id to read
        put(line, c, MapIdValue(value, map), right);
      }
    }
    result += line;
    if (l + 1 < lines.size() || ends_with_newline) result += '\n';
  }
  return result;
}

std::string MapScontrolOutput(std::string_view out, const IdMap& map, const Unsettled& unsettled) {
  static const std::regex kId(R"(\b(JobId|ArrayJobId|HetJobId)=([0-9]+))");
  std::string result;
  std::string text(out);
  if (!unsettled.empty()) {
    // Each record begins with its JobId= (a line of its own kind, or the
    // start of a one-liner); its JobState= is somewhere in it.
    static const std::regex kRecord(R"((^|\n)JobId=([0-9]+)\b)");
    std::vector<std::pair<std::size_t, std::string>> records;  // where each begins, its id
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kRecord);
         it != std::sregex_iterator(); ++it) {
      records.emplace_back(static_cast<std::size_t>(it->position(0)), (*it)[2].str());
    }
    for (std::size_t r = records.size(); r-- > 0;) {  // from the last: positions stay true
      if (!HeldId(records[r].second, unsettled)) continue;
      const std::size_t end = r + 1 < records.size() ? records[r + 1].first : text.size();
      const std::size_t at = text.find("JobState=", records[r].first);
      if (at == std::string::npos || at >= end) continue;
      const std::size_t from = at + std::string_view("JobState=").size();
      std::size_t to = text.find_first_of(" \n", from);
      if (to == std::string::npos || to > end) to = end;
      if (IsEndedSlurmState(std::string_view(text).substr(from, to - from))) {
        text.replace(from, to - from, kHeldState);
      }
    }
  }
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

std::string MapSacctByCluster(std::string_view out, bool parsable,
                              const std::map<std::string, IdMap, std::less<>>& maps,
                              const std::map<std::string, Unsettled, std::less<>>& unsettled) {
  const std::vector<std::string_view> lines = Lines(out);
  const std::size_t header_lines = parsable ? 1 : 2;
  if (lines.size() < header_lines) return std::string(out);
  // -p ends every line with '|'; -P does not.
  const bool trailing = parsable && lines[0].ends_with('|');
  // The line without its Cluster field, and that field's value.
  auto split = [&](std::string_view line) -> std::pair<std::string, std::string_view> {
    if (parsable) {
      if (trailing && line.ends_with('|')) line.remove_suffix(1);
      const std::size_t bar = line.rfind('|');
      if (bar == std::string_view::npos) return {std::string(line), ""};
      return {std::string(line.substr(0, bar)) + (trailing ? "|" : ""),
              Trimmed(line.substr(bar + 1))};
    }
    const std::size_t cut = static_cast<std::size_t>(kSacctClusterWidth) + 1;
    if (line.size() < cut) return {std::string(line), ""};
    return {std::string(line.substr(0, line.size() - cut)),
            Trimmed(line.substr(line.size() - cut))};
  };
  std::string header, result;
  for (std::size_t l = 0; l < header_lines; ++l) header += split(lines[l]).first + "\n";
  result = header;
  const IdMap none;
  const Unsettled nothing;
  for (std::size_t l = header_lines; l < lines.size(); ++l) {
    const auto [line, cluster] = split(lines[l]);
    const auto map = maps.find(cluster);
    const auto held = unsettled.find(cluster);
    // Mapped under the header (MapSacctOutput reads the columns from it).
    const std::string mapped =
        MapSacctOutput(header + line + "\n", parsable, map == maps.end() ? none : map->second,
                       held == unsettled.end() ? nothing : held->second);
    result += mapped.substr(header.size());
  }
  if (!out.ends_with('\n') && result.ends_with('\n')) result.pop_back();
  return result;
}

std::string MapClusterSections(
    std::string_view out, const std::map<std::string, IdMap, std::less<>>& maps,
    const std::function<std::string(std::string_view, const IdMap&)>& map_one) {
  static constexpr std::string_view kSection = "CLUSTER: ";
  const IdMap none;
  std::string result;
  const IdMap* map = nullptr;  // before the first section: line by line
  std::size_t start = 0;       // of the current section's text
  auto flush = [&](std::size_t end) {
    const std::string_view text = out.substr(start, end - start);
    result += map == nullptr ? std::string(text) : map_one(text, *map);
  };
  for (std::size_t at = 0; at < out.size();) {
    std::size_t eol = out.find('\n', at);
    eol = eol == std::string_view::npos ? out.size() : eol + 1;
    const std::string_view line = out.substr(at, eol - at);
    if (map == nullptr && !line.starts_with(kSection)) {
      // With -h there are no sections: each line begins with its cluster's
      // name. Before the first section (-l's date line) nothing is to map.
      const auto found = maps.find(line.substr(0, line.find(' ')));
      result += map_one(line, found == maps.end() ? none : found->second);
      start = eol;
    } else if (line.starts_with(kSection)) {
      flush(at);
      result += line;
      std::string_view name = line.substr(kSection.size());
      while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.remove_suffix(1);
      const auto found = maps.find(name);
      map = found == maps.end() ? &none : &found->second;
      start = eol;
    }
    at = eol;
  }
  flush(out.size());
  return result;
}

std::string SectionsWithoutHeaders(std::string_view sections, bool name_lines) {
  static constexpr std::string_view kSection = "CLUSTER: ";
  std::size_t count = 0;
  for (std::size_t at = sections.find(kSection); at != std::string_view::npos;
       at = sections.find(kSection, at + 1)) {
    if (at == 0 || sections[at - 1] == '\n') ++count;
  }
  std::string out;
  std::string cluster;
  bool header_next = false;
  for (std::size_t at = 0; at < sections.size();) {
    std::size_t eol = sections.find('\n', at);
    eol = eol == std::string_view::npos ? sections.size() : eol + 1;
    std::string_view line = sections.substr(at, eol - at);
    at = eol;
    if (line.starts_with(kSection)) {
      cluster = std::string(line.substr(kSection.size()));
      while (!cluster.empty() && (cluster.back() == '\n' || cluster.back() == ' '))
        cluster.pop_back();
      header_next = true;
      continue;
    }
    if (header_next) {
      header_next = false;
      continue;
    }
    if (line == "\n") continue;
    if (name_lines && count > 1) out += fmt::format("{:<10} ", cluster);
    out += line;
  }
  return out;
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
