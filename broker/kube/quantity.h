// Kubernetes resource quantities ("500m", "4", "16Gi", "1e3", "512M") as
// numbers: CPUs in millicores, memory in bytes. Unparsable text is nullopt.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace skyslurm::kube {

std::optional<std::int64_t> Millicores(std::string_view quantity);
std::optional<std::int64_t> Bytes(std::string_view quantity);
// A count ("8" for nvidia.com/gpu).
std::optional<std::int64_t> Count(std::string_view quantity);

}  // namespace skyslurm::kube
