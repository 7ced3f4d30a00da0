// A GPU type as a given cluster spells it in its GRES: through the site's
// gpu_aliases, else any GRES type on the cluster that the catalog says is the
// same accelerator.
#pragma once

#include <optional>
#include <string>

#include "broker/catalog/accelerators.h"
#include "broker/cluster/description.h"
#include "broker/config/settings.h"

namespace skyslurm::translate {

struct GpuSpelling {
  std::optional<std::string> type;  // the cluster's own spelling, when it has the GPU
  std::string canonical;            // catalog name, or the type as asked if unknown
  std::string why;                  // "beta spells H100 'nvidia_h100_80gb_hbm3'", or the reason
};

GpuSpelling SpellGpu(const std::string& asked, const cluster::Description& target,
                     const config::ClusterSettings& settings,
                     const catalog::AcceleratorCatalog& catalog);

// The GPU types (GRES "gpu") on a cluster and their largest count per node.
std::vector<std::pair<std::string, std::int64_t>> GpuTypesOf(const cluster::Description& target);

}  // namespace skyslurm::translate
