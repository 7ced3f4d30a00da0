// Slurm host lists: "beta-n[1-2,5],login1" <-> beta-n1 beta-n2 beta-n5 login1.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::cluster {

// Expands a host list; ranges keep their zero padding ("n[01-03]").
Result<std::vector<std::string>> ExpandHostlist(std::string_view list);

}  // namespace skyslurm::cluster
