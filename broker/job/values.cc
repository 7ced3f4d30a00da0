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
  std::string_view digits = text;
  std::int64_t scale_kb = 1024;  // MB by default
  bool divide = false;
  if (!text.empty() && std::isalpha(static_cast<unsigned char>(text.back()))) {
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
      case 'K': divide = true; break;
      case 'M': scale_kb = 1024; break;
      case 'G': scale_kb = 1024 * 1024; break;
      case 'T': scale_kb = std::int64_t{1024} * 1024 * 1024; break;
      default:
        return InvalidArgumentError(fmt::format(
            "invalid memory size '{}' (expected a number with an optional K, M, G or T suffix)",
            text));
    }
    digits.remove_suffix(1);
  }
  std::int64_t n = 0;
  if (!ParseNumber(digits, &n) || n > std::numeric_limits<std::int64_t>::max() / scale_kb) {
    return InvalidArgumentError(fmt::format(
        "invalid memory size '{}' (expected a number with an optional K, M, G or T suffix)",
        text));
  }
  if (divide) return (n + 1023) / 1024;
  return n * scale_kb / 1024;
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

Result<std::vector<GresItem>> ParseGresList(std::string_view text) {
  std::vector<GresItem> items;
  if (text.empty()) return InvalidArgumentError("empty GRES list");
  for (std::string_view element : Split(text, ',')) {
    GresItem item;
    item.text = std::string(element);
    std::string_view spec = element;
    if (spec.starts_with("gres/")) spec.remove_prefix(5);
    const auto fields = Split(spec, ':');
    if (fields[0].empty() || fields.size() > 3) {
      return InvalidArgumentError(
          fmt::format("invalid GRES '{}' (expected name[:type][:count])", element));
    }
    item.name = std::string(fields[0]);
    auto parse_count = [&](std::string_view c) -> Status {
      // Counts may carry a k/m/g multiplier for GRES like bandwidth.
      std::string_view digits = c;
      std::int64_t multiplier = 1;
      if (!c.empty()) {
        switch (std::tolower(static_cast<unsigned char>(c.back()))) {
          case 'k': multiplier = 1024; break;
          case 'm': multiplier = 1024 * 1024; break;
          case 'g': multiplier = 1024 * 1024 * 1024; break;
          default: break;
        }
      }
      if (multiplier != 1) digits.remove_suffix(1);
      std::int64_t n = 0;
      if (!ParseNumber(digits, &n)) {
        return InvalidArgumentError(
            fmt::format("invalid count '{}' in GRES '{}' (expected a whole number)", c, element));
      }
      item.count = n * multiplier;
      return OkStatus();
    };
    if (fields.size() == 2) {
      // name:count or name:type: a leading digit makes it a count.
      if (!fields[1].empty() && std::isdigit(static_cast<unsigned char>(fields[1][0]))) {
        SKY_RETURN_IF_ERROR(parse_count(fields[1]));
      } else if (fields[1].empty()) {
        return InvalidArgumentError(fmt::format("invalid GRES '{}' (empty type)", element));
      } else {
        item.type = std::string(fields[1]);
      }
    } else if (fields.size() == 3) {
      if (fields[1].empty()) {
        return InvalidArgumentError(fmt::format("invalid GRES '{}' (empty type)", element));
      }
      item.type = std::string(fields[1]);
      SKY_RETURN_IF_ERROR(parse_count(fields[2]));
    }
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
  std::vector<GpuCount> gpus;
  if (text.empty()) return InvalidArgumentError("empty GPU count");
  for (std::string_view element : Split(text, ',')) {
    GpuCount gpu;
    std::string_view count = element;
    const auto colon = element.rfind(':');
    if (colon != std::string_view::npos) {
      gpu.type = std::string(element.substr(0, colon));
      count = element.substr(colon + 1);
      if (gpu.type.empty()) {
        return InvalidArgumentError(
            fmt::format("invalid GPU request '{}' (expected [type:]count)", element));
      }
      if (gpu.type.starts_with("gpu:")) gpu.type.erase(0, 4);
    }
    if (!ParseNumber(count, &gpu.count) || gpu.count < 1) {
      return InvalidArgumentError(fmt::format(
          "invalid GPU count '{}' in '{}' (expected [type:]count, count >= 1)", count, element));
    }
    gpus.push_back(std::move(gpu));
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
