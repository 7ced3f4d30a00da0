// When a cluster's last look already answers "it starts now", without
// asking its scheduler (sbatch --test-only: a process and a round trip).
// Deliberately narrow: only a job whose options are all about its size, on
// a partition with enough wholly idle nodes of its shape and nothing pending
// in any partition sharing those nodes. Anything else (constraints, node
// lists, accounts or QoS whose limits only slurmctld knows, reservations,
// dependencies, arrays, exclusive) is asked as before. Pure.
#pragma once

#include <ctime>
#include <optional>
#include <string>

#include "broker/catalog/accelerators.h"
#include "broker/cluster/inventory.h"
#include "broker/job/request.h"

namespace skyslurm::place {

// Why the job certainly starts now in `partition` (a sentence for explain),
// or nullopt when only the scheduler can say.
std::optional<std::string> StartsNowForCertain(const job::Request& request,
                                               const cluster::Inventory& inventory,
                                               const std::string& partition,
                                               const catalog::AcceleratorCatalog& catalog,
                                               std::time_t now);

}  // namespace skyslurm::place
