// `skyslurm cost [--since WHEN] [--json]`: what the elastic clusters billed
// since WHEN (default: the start of this UTC month), per cluster: node- and
// GPU-hours, the amount at the site's prices, and your share of it (the
// node time your jobs caused, boot and idle tail included; place/spending.h).
// WHEN as cloud::PeriodStart reads it.
#pragma once

#include <string>

namespace skyslurm::cli {

int RunCost(const std::string& since, bool json);

}  // namespace skyslurm::cli
