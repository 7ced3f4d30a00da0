#include "broker/util/timestamp.h"

#include <string>

namespace skyslurm {

std::optional<std::time_t> ParseUtcTimestamp(std::string_view text) {
  std::tm tm{};
  const std::string s(text);
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || (*end != '\0' && *end != ' ')) return std::nullopt;
  return timegm(&tm);
}

}  // namespace skyslurm
