#include "broker/job/values.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <limits>

namespace skyslurm::job {
namespace {

bool ParseNumber(std::string_view text, std::int64_t* out) {
  if (text.empty()) return false;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && *out >= 0;
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto pos = text.find(sep, start);
    parts.push_back(text.substr(start, pos == std::string_view::npos ? std::string_view::npos
                                                                       : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

// C's isspace in the C locale, which strtol skips.
bool IsCSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

Status BadTime(std::string_view text) {
  return InvalidArgumentError(fmt::format(
      "invalid time limit '{}' (expected minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or "
      "UNLIMITED)",
      text));
}

}  // namespace

Result<TimeLimit> ParseTimeLimit(std::string_view text) {
  if (text == "-1" || EqualsIgnoreCase(text, "INFINITE") || EqualsIgnoreCase(text, "UNLIMITED")) {
    return TimeLimit{};
  }
  std::int64_t days = 0, hours = 0, minutes = 0, seconds = 0;
  std::string_view clock = text;
  const auto dash = text.find('-');
  const bool has_days = dash != std::string_view::npos;
  if (has_days) {
    if (!ParseNumber(text.substr(0, dash), &days)) return BadTime(text);
    clock = text.substr(dash + 1);
  }
  const auto fields = Split(clock, ':');
  std::int64_t v[3] = {0, 0, 0};
  if (fields.size() > 3) return BadTime(text);
  for (std::size_t k = 0; k < fields.size(); ++k) {
    if (!ParseNumber(fields[k], &v[k])) return BadTime(text);
  }
  if (has_days) {  // D-HH, D-HH:MM, D-HH:MM:SS
    hours = v[0];
    if (fields.size() >= 2) minutes = v[1];
    if (fields.size() == 3) seconds = v[2];
  } else if (fields.size() == 1) {  // MM
    minutes = v[0];
  } else if (fields.size() == 2) {  // MM:SS
    minutes = v[0];
    seconds = v[1];
  } else {  // HH:MM:SS
    hours = v[0];
    minutes = v[1];
    seconds = v[2];
  }
  if (days > 365 * 100 || hours > 24 * 365 * 100 || minutes > 60 * 24 * 365 * 100) {
    return BadTime(text);
  }
  const std::int64_t total = ((days * 24 + hours) * 60 + minutes) + (seconds + 59) / 60;
  if (total == 0) return TimeLimit{};  // Slurm: a limit of 0 means no limit
  return TimeLimit{total};
}

std::string FormatTimeLimit(const TimeLimit& limit) {
  if (limit.infinite()) return "UNLIMITED";
  const std::int64_t m = *limit.minutes;
  const std::int64_t days = m / (24 * 60), hours = (m / 60) % 24, minutes = m % 60;
  if (days > 0) return fmt::format("{}-{:02}:{:02}:00", days, hours, minutes);
  if (hours > 0) return fmt::format("{}:{:02}:00", hours, minutes);
  return fmt::format("{}:00", minutes);
}

Result<std::int64_t> ParseMemoryMb(std::string_view text) {
  // Slurm's str_to_mbytes (src/common/proc_args.c): strtoll's number (blanks
  // before it and a sign allowed), then nothing (MB) or one of K, M, G, T in
  // either case, optionally followed by B or b ("24gb", "512MB", "2tB").
  auto bad = [&] {
    return InvalidArgumentError(fmt::format(
        "invalid memory size '{}' (expected a number with an optional K, M, G or T suffix, "
        "optionally followed by B)",
        text));
  };
  std::size_t i = 0;
  while (i < text.size() && IsCSpace(text[i])) ++i;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  const std::size_t digits_start = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == digits_start) return bad();
  std::int64_t n = 0;
  const auto [ptr, ec] = std::from_chars(text.data() + digits_start, text.data() + i, n);
  if (ec != std::errc()) return bad();  // beyond 2^63: strtoll's ERANGE
  if (negative && n != 0) return bad();
  std::string_view unit = text.substr(i);
  std::int64_t scale_mb = 1;
  bool kilobytes = false;
  if (!unit.empty()) {
    switch (std::toupper(static_cast<unsigned char>(unit[0]))) {
      case 'K': kilobytes = true; break;
      case 'M': break;
      case 'G': scale_mb = 1024; break;
      case 'T': scale_mb = 1024 * 1024; break;
      default: return bad();
    }
    unit.remove_prefix(1);
    if (!unit.empty() && (unit != "B" && unit != "b")) return bad();
  }
  if (kilobytes) return n / 1024 + (n % 1024 != 0 ? 1 : 0);  // rounds up, as Slurm does
  // Slurm's own product would wrap around; no cluster has that much memory.
  if (n > std::numeric_limits<std::int64_t>::max() / scale_mb) return bad();
  return n * scale_mb;
}

Result<NodeCount> ParseNodeCount(std::string_view text) {
  const auto dash = text.find('-');
  NodeCount count;
  if (dash == std::string_view::npos) {
    if (!ParseNumber(text, &count.min) || count.min < 1) {
      return InvalidArgumentError(
          fmt::format("invalid node count '{}' (expected N or MIN-MAX)", text));
    }
    count.max = count.min;
    return count;
  }
  if (!ParseNumber(text.substr(0, dash), &count.min) ||
      !ParseNumber(text.substr(dash + 1), &count.max) || count.min < 1 || count.max < count.min) {
    return InvalidArgumentError(
        fmt::format("invalid node count '{}' (expected N or MIN-MAX)", text));
  }
  return count;
}

Result<std::int64_t> ParsePositiveCount(std::string_view text) {
  std::int64_t n = 0;
  if (!ParseNumber(text, &n) || n < 1) {
    return InvalidArgumentError(fmt::format("invalid count '{}' (expected a whole number >= 1)",
                                            text));
  }
  return n;
}

namespace {

// A GRES count as slurmctld reads it (_is_valid_number in src/common/gres.c):
// strtoull's number, then nothing or one of suffix_mult's units (k, m, g, t,
// p = 1024^n, kib..pib the same, kb..pb = 1000^n, any case). No digits at all
// reads as 0 ("k" is a count of 0). False when it is not a count, in which
// case slurmctld takes the word as a type.
bool ParseGresCount(std::string_view text, std::int64_t* count) {
  std::size_t i = 0;
  while (i < text.size() && IsCSpace(text[i])) ++i;
  if (i < text.size() && text[i] == '+') ++i;
  // A '-' makes strtoull wrap around to a count no node has; we call it no
  // count at all (see docs/sbatch-compatibility.md).
  const std::size_t digits_start = i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  std::int64_t n = 0;
  if (i > digits_start) {
    const auto [ptr, ec] = std::from_chars(text.data() + digits_start, text.data() + i, n);
    if (ec != std::errc()) return false;
  }
  std::string suffix(text.substr(i));
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::int64_t multiplier = 0;
  if (suffix.empty()) {
    multiplier = 1;
  } else {
    static constexpr std::string_view kUnits = "kmgtp";
    const auto unit = kUnits.find(suffix[0]);
    if (unit == std::string_view::npos) return false;
    const std::string_view rest = std::string_view(suffix).substr(1);
    std::int64_t base = 0;
    if (rest.empty() || rest == "ib") {
      base = 1024;
    } else if (rest == "b") {
      base = 1000;
    } else {
      return false;
    }
    multiplier = 1;
    for (std::size_t k = 0; k <= unit; ++k) multiplier *= base;
  }
  if (n > std::numeric_limits<std::int64_t>::max() / multiplier) return false;
  *count = n * multiplier;
  return true;
}

Status BadGres(std::string_view element, std::string_view why) {
  return InvalidArgumentError(fmt::format(
      "invalid GRES '{}' ({}; Slurm reads name[:type][:count]: \"Invalid generic resource (gres) "
      "specification\")",
      element, why));
}

// One element of a GRES list, as slurmctld splits it (_get_next_gres): at
// the first colon and the next; "name", "name:count", "name:type" (a word
// that is not a count is a type, with a count of 1), "name:type:count".
Result<GresItem> ParseGresElement(std::string_view element) {
  GresItem item;
  item.text = std::string(element);
  std::string_view spec = element;
  if (spec.starts_with("gres/")) spec.remove_prefix(5);
  const auto first = spec.find(':');
  item.name = std::string(spec.substr(0, first));
  if (item.name.empty()) return BadGres(element, "no name");
  if (first == std::string_view::npos) return item;
  const std::string_view rest = spec.substr(first + 1);
  const auto second = rest.find(':');
  if (second == std::string_view::npos) {
    if (rest.empty()) return BadGres(element, "empty type");
    if (!ParseGresCount(rest, &item.count)) item.type = std::string(rest);
    return item;
  }
  const std::string_view type = rest.substr(0, second), count = rest.substr(second + 1);
  if (type.empty()) return BadGres(element, "empty type");
  if (count.empty()) return BadGres(element, "empty count");
  item.type = std::string(type);
  if (!ParseGresCount(count, &item.count)) {
    return BadGres(element, fmt::format("'{}' is not a count", count));
  }
  return item;
}

// The non-empty elements of a comma-separated list (both strtok and
// slurmctld skip empty ones).
std::vector<std::string_view> NonEmptyElements(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::string_view e : Split(text, ',')) {
    if (!e.empty()) out.push_back(e);
  }
  return out;
}

}  // namespace

Result<std::vector<GresItem>> ParseGresList(std::string_view text) {
  std::vector<GresItem> items;
  // sbatch sends nothing for --gres=none (any case).
  if (EqualsIgnoreCase(text, "none")) return items;
  for (std::string_view element : NonEmptyElements(text)) {
    SKY_ASSIGN_OR_RETURN(GresItem item, ParseGresElement(element));
    if (item.count == 0) continue;  // slurmctld drops a count of 0
    items.push_back(std::move(item));
  }
  return items;
}

std::string FormatGres(const GresItem& item) {
  std::string text = item.name;
  if (!item.type.empty()) text += ":" + item.type;
  text += ":" + std::to_string(item.count);
  return text;
}

Result<std::vector<GpuCount>> ParseGpuList(std::string_view text) {
  // sbatch turns each element into "gpu:<element>" (xfmt_tres), which
  // slurmctld then reads as a GRES: "h100" is one H100, "h100:2" two, "2"
  // two of any type; "gpu:h100:2" becomes gpu:gpu:h100:2 and is refused.
  std::vector<GpuCount> gpus;
  for (std::string_view element : NonEmptyElements(text)) {
    auto item = ParseGresElement("gpu:" + std::string(element));
    if (!item.ok()) {
      return InvalidArgumentError(fmt::format(
          "invalid GPU request '{}' (expected type, count or type:count: Slurm reads it as "
          "gres gpu:{}, \"Invalid generic resource (gres) specification\")",
          element, element));
    }
    if (item->count == 0) continue;
    gpus.push_back({item->type, item->count});
  }
  return gpus;
}

std::vector<std::string> ConstraintFeatures(std::string_view expression) {
  std::vector<std::string> features;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) features.push_back(current);
    current.clear();
  };
  bool in_count = false;
  for (char c : expression) {
    if (c == '&' || c == '|' || c == ',' || c == '[' || c == ']' || c == '(' || c == ')' ||
        c == '!') {
      flush();
      in_count = false;
    } else if (c == '*') {
      flush();
      in_count = true;  // "feature*2": the count is not a feature
    } else if (!in_count) {
      current += c;
    }
  }
  flush();
  return features;
}

}  // namespace skyslurm::job
