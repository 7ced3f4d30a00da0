#include "broker/job/values.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

namespace skyslurm::job {
namespace {

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

// C's strtol in base 10 over `text` from `pos`: blanks, a sign, digits;
// saturates at the limits of long as strtol does. False when there are no
// digits (pos is then left where it was).
bool StrToLong(std::string_view text, std::size_t* pos, long long* value) {
  std::size_t i = *pos;
  while (i < text.size() && IsCSpace(text[i])) ++i;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  const std::size_t digits = i;
  unsigned long long magnitude = 0;
  bool saturated = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const unsigned d = static_cast<unsigned>(text[i] - '0');
    if (magnitude > (static_cast<unsigned long long>(std::numeric_limits<long long>::max()) - d) / 10) {
      saturated = true;
    } else {
      magnitude = magnitude * 10 + d;
    }
    ++i;
  }
  if (i == digits) return false;
  *pos = i;
  if (saturated) {
    *value = negative ? std::numeric_limits<long long>::min() : std::numeric_limits<long long>::max();
  } else {
    *value = negative ? -static_cast<long long>(magnitude) : static_cast<long long>(magnitude);
  }
  return true;
}

// The int Slurm keeps of a long: `(int)num`, which wraps.
std::int64_t AsCInt(long long v) {
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<unsigned long long>(v)));
}

// _str_to_nodes (src/common/proc_args.c): strtol, then an optional k and an
// optional m (x1024 each), then only blanks may follow. -1 with no digits.
bool StrToNodes(std::string_view text, std::int64_t* nodes) {
  std::size_t pos = 0;
  long long n = 0;
  if (!StrToLong(text, &pos, &n)) {
    *nodes = -1;
    return std::all_of(text.begin(), text.end(), IsCSpace);
  }
  auto wrap_multiply = [](long long a, long long b) {
    return static_cast<long long>(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b));
  };
  if (pos < text.size() && (text[pos] == 'k' || text[pos] == 'K')) {
    n = wrap_multiply(n, 1024);
    ++pos;
  }
  if (pos < text.size() && (text[pos] == 'm' || text[pos] == 'M')) {
    n = wrap_multiply(n, 1024 * 1024);
    ++pos;
  }
  *nodes = AsCInt(n);
  return std::all_of(text.begin() + static_cast<std::ptrdiff_t>(pos), text.end(), IsCSpace);
}

}  // namespace

Result<TimeLimit> ParseTimeLimit(std::string_view text) {
  // time_str2mins (src/common/parse_time.c), then sbatch's rule that 0 is no
  // limit. Only digits, '-' and ':' ("1-" is one day; "1:60" two minutes).
  if (text == "-1" || EqualsIgnoreCase(text, "INFINITE") || EqualsIgnoreCase(text, "UNLIMITED")) {
    return TimeLimit{};
  }
  // _is_valid_timespec: at most one '-', never after a ':', at most two ':',
  // and enough groups of digits for the colons.
  int digit_groups = 0, dashes = 0, colons = 0;
  bool in_digits = false;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (!in_digits) ++digit_groups;
      in_digits = true;
    } else if (c == '-') {
      in_digits = false;
      ++dashes;
      if (colons > 0) return BadTime(text);
    } else if (c == ':') {
      in_digits = false;
      ++colons;
    } else {
      return BadTime(text);
    }
  }
  if (digit_groups == 0 || dashes > 1 || colons > 2) return BadTime(text);
  if (colons > 0 && digit_groups < colons + 1 + dashes) return BadTime(text);
  // sscanf's "%d" fields, each stopping at the first character it cannot take.
  std::size_t pos = 0;
  auto scan = [&](std::int64_t* v) {
    long long n = 0;
    if (!StrToLong(text, &pos, &n)) return false;
    *v = n;
    return true;
  };
  auto literal = [&](char c) {
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  };
  std::int64_t d = 0, h = 0, m = 0, sec = 0;
  if (dashes == 1) {  // days-[hours[:minutes[:seconds]]]
    if (scan(&d) && literal('-') && scan(&h) && literal(':') && scan(&m) && literal(':')) {
      scan(&sec);
    }
  } else if (scan(&h) && literal(':') && scan(&m) && literal(':') && scan(&sec)) {
    // hours:minutes:seconds
  } else {  // minutes[:seconds]: what was read as hours and minutes
    sec = m;
    m = h;
    h = 0;
  }
  // Slurm's ints: each field as sscanf stores it (strtol's long cut to an
  // int: a number beyond 2^63 reads as -1), and the sum as C's int arithmetic
  // wraps it.
  auto wrap = [](std::int64_t v) { return AsCInt(v); };
  const std::int64_t seconds = wrap(wrap(wrap(wrap(AsCInt(d) * 86400) + wrap(AsCInt(h) * 3600)) +
                                         wrap(AsCInt(m) * 60)) +
                                    AsCInt(sec));
  if (seconds < 0) {
    return InvalidArgumentError(fmt::format(
        "invalid time limit '{}' (a negative time: sbatch sends it as a huge number, which the "
        "controller refuses)",
        text));
  }
  // (seconds + 59) / 60 in Slurm's int: near 2^31 it wraps below 0.
  const std::int64_t total = AsCInt(seconds + 59) / 60;
  if (total < 0) {
    return InvalidArgumentError(fmt::format(
        "invalid time limit '{}' (too long: Slurm's minutes wrap below 0, which the controller "
        "refuses)",
        text));
  }
  if (total == 0) return TimeLimit{};  // sbatch: a limit of 0 means no limit
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
  // verify_node_count (src/common/proc_args.c): "N", or "MIN-MAX" split at
  // the first '-' where an empty or negative MIN is 1 and a MAX of 0 is no
  // maximum; "2k" is 2048.
  auto bad = [&](std::string_view why) {
    return InvalidArgumentError(
        fmt::format("invalid node count '{}' ({}; expected N or MIN-MAX)", text, why));
  };
  NodeCount count;
  const auto dash = text.find('-');
  if (dash == std::string_view::npos) {
    if (!StrToNodes(text, &count.min) || count.min < 0) return bad("not a number of nodes");
    count.max = count.min;
  } else {
    if (!StrToNodes(text.substr(0, dash), &count.min)) return bad("not a number of nodes");
    if (count.min < 0) count.min = 1;
    if (!StrToNodes(text.substr(dash + 1), &count.max)) return bad("not a number of nodes");
    if (count.max != 0 && count.max < count.min) return bad("the maximum is below the minimum");
    if (count.max == 0) count.max = count.min;  // no maximum: the minimum is what it gets
  }
  return count;
}

Result<std::int64_t> ParsePositiveCount(std::string_view text) {
  // parse_int (src/common/proc_args.c): strtol over the whole word, above 0;
  // Slurm then keeps it as an int, and a count that wraps to 0 or below is
  // refused by sbatch's own checks.
  std::size_t pos = 0;
  long long n = 0;
  if (!StrToLong(text, &pos, &n) || pos != text.size() || n <= 0 ||
      n == std::numeric_limits<long long>::max() || AsCInt(n) <= 0) {
    return InvalidArgumentError(fmt::format(
        "invalid count '{}' (expected a whole number above 0, nothing after it; Slurm: Invalid "
        "numeric value)",
        text));
  }
  return AsCInt(n);
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
  // Without digits, strtoull leaves its end where the text starts: the
  // blanks and the sign belong to the suffix then.
  std::string suffix(i > digits_start ? text.substr(i) : text);
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
  const auto first = spec.find(':');
  item.name = std::string(spec.substr(0, first));
  if (first != std::string_view::npos) {
    const std::string_view rest = spec.substr(first + 1);
    const auto second = rest.find(':');
    if (second == std::string_view::npos) {
      if (rest.empty()) return BadGres(element, "empty type");
      if (!ParseGresCount(rest, &item.count)) item.type = std::string(rest);
    } else {
      const std::string_view type = rest.substr(0, second), count = rest.substr(second + 1);
      if (type.empty()) return BadGres(element, "empty type");
      if (count.empty()) return BadGres(element, "empty count");
      item.type = std::string(type);
      if (!ParseGresCount(count, &item.count)) {
        return BadGres(element, fmt::format("'{}' is not a count", count));
      }
    }
  }
  // slurmctld drops a count of 0 before it looks the name up.
  if (item.count != 0 && item.name.empty()) return BadGres(element, "no name");
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
    // The same name and type twice: slurmctld keeps the larger count.
    auto same = std::find_if(items.begin(), items.end(), [&](const GresItem& i) {
      return i.name == item.name && i.type == item.type;
    });
    if (same != items.end()) {
      if (item.count > same->count) *same = std::move(item);
      continue;
    }
    items.push_back(std::move(item));
  }
  return items;
}

std::string FormatGres(const GresItem& item) {
  // fmt, not operator+ on a temporary: GCC 12 at -O3 reports a false
  // -Wrestrict inside std::string's insert for the latter (GCC bug 105651).
  return item.type.empty() ? fmt::format("{}:{}", item.name, item.count)
                           : fmt::format("{}:{}:{}", item.name, item.type, item.count);
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
    auto same = std::find_if(gpus.begin(), gpus.end(),
                             [&](const GpuCount& g) { return g.type == item->type; });
    if (same != gpus.end()) {
      same->count = std::max(same->count, item->count);  // as slurmctld does
      continue;
    }
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
