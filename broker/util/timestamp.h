// Slurm's timestamps, as its commands print them with TZ=UTC.
#pragma once

#include <ctime>
#include <optional>
#include <string_view>

namespace skyslurm {

// "2026-11-30T04:39:25" (UTC) -> seconds since the epoch; nullopt for
// anything else (Slurm's "N/A", "Unknown", "None").
std::optional<std::time_t> ParseUtcTimestamp(std::string_view text);

// RFC 3339, as Kubernetes writes times: "2026-12-02T01:48:28Z", with
// optional fractional seconds and a Z or +hh:mm/-hh:mm offset.
std::optional<std::time_t> ParseRfc3339(std::string_view text);
// Seconds since the epoch as "2026-12-02T01:48:28Z".
std::string FormatRfc3339(std::time_t t);
// Seconds since the epoch as Slurm's commands print and read a time with
// TZ=UTC, "2026-11-30T04:39:25" (ParseUtcTimestamp's inverse).
std::string FormatUtcTimestamp(std::time_t t);

}  // namespace skyslurm
