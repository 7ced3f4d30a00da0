// `skyslurm gpus [--json]`: one table over every cluster: cluster,
// partition, GPU type (canonical and the cluster's own spelling), total,
// free now, pending demand.
#pragma once

namespace skyslurm::cli {

int RunGpus(bool json);

}  // namespace skyslurm::cli
