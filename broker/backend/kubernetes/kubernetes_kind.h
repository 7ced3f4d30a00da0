// Kubernetes as a kind of backend (the factory table's row): a cluster
// reached over its API server with the user's kubeconfig context.
#pragma once

#include "broker/backend/backend_kind.h"

namespace skyslurm::backend {

BackendKind KubernetesKind();

}  // namespace skyslurm::backend
