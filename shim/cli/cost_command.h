// `skyslurm cost [--since WHEN] [--json]`: what the elastic clusters billed
// since WHEN (default: the start of this UTC month), per cluster: node- and
// GPU-hours, the amount at the site's prices, and your share of it (the
// node time your jobs caused, boot and idle tail included; place/spending.h).
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace skyslurm::cli {

// WHEN: "month" (the UTC month's start), "today" (UTC midnight), a length
// back from `now` ("7d", "24h", "90m"), or a UTC date or time
// ("2026-12-01", "2026-12-01T06:00:00"); nullopt for anything else.
std::optional<std::time_t> ParseSince(std::string_view when, std::time_t now);

int RunCost(const std::string& since, bool json);

}  // namespace skyslurm::cli
