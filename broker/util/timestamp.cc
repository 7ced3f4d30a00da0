#include "broker/util/timestamp.h"

#include <cstring>
#include <string>

namespace skyslurm {

std::optional<std::time_t> ParseUtcTimestamp(std::string_view text) {
  std::tm tm{};
  const std::string s(text);
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || (*end != '\0' && *end != ' ')) return std::nullopt;
  return timegm(&tm);
}

std::optional<std::time_t> ParseRfc3339(std::string_view text) {
  std::tm tm{};
  const std::string s(text);
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) return std::nullopt;
  if (*end == '.') {
    ++end;
    while (*end >= '0' && *end <= '9') ++end;
  }
  long offset = 0;
  if (*end == 'Z' || *end == 'z') {
    ++end;
  } else if ((*end == '+' || *end == '-') && std::strlen(end) == 6 && end[3] == ':') {
    const int hours = (end[1] - '0') * 10 + (end[2] - '0');
    const int minutes = (end[4] - '0') * 10 + (end[5] - '0');
    offset = (hours * 60L + minutes) * 60L * (*end == '-' ? -1 : 1);
    end += 6;
  } else {
    return std::nullopt;
  }
  if (*end != '\0') return std::nullopt;
  return timegm(&tm) - offset;
}

std::string FormatUtcTimestamp(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

std::string FormatRfc3339(std::time_t t) { return FormatUtcTimestamp(t) + "Z"; }

}  // namespace skyslurm
