// `skyslurm describe [CLUSTER...]`: each cluster's description (partitions,
// nodes, GRES, modules) as YAML, the format `description:` files use.
#pragma once

#include <string>
#include <vector>

namespace skyslurm::cli {

int RunDescribe(const std::vector<std::string>& clusters);

}  // namespace skyslurm::cli
