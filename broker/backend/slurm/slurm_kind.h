// Slurm as a kind of backend (the factory table's row): a cluster reached
// directly (its SLURM_CONF) or over SSH (its ~/.slurm/config entry), each
// through Slurm's own commands or, with `access: rest`, slurmrestd.
#pragma once

#include "broker/backend/backend_kind.h"

namespace skyslurm::backend {

BackendKind SlurmKind();

}  // namespace skyslurm::backend
