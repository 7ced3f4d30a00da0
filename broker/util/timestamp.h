// Slurm's timestamps, as its commands print them with TZ=UTC.
#pragma once

#include <ctime>
#include <optional>
#include <string_view>

namespace skyslurm {

// "2026-11-30T04:39:25" (UTC) -> seconds since the epoch; nullopt for
// anything else (Slurm's "N/A", "Unknown", "None").
std::optional<std::time_t> ParseUtcTimestamp(std::string_view text);

}  // namespace skyslurm
