// The replay of a load on the real testbed (issue 18): each job of the
// load becomes a real Slurm job (`sleep` for its runtime, its GPUs, its
// --time) submitted at its time by the policy under test, on alpha, beta
// and gamma (scripts/testbed/up); what each did is read back from the
// clusters' queues and accounting into the simulator's outcome form, so
// one report serves both.
#pragma once

#include <vector>

#include "bench/trace/policy_sim.h"
#include "bench/trace/trace_load.h"
#include "broker/util/status.h"

namespace skyslurm::trace {

Result<SimResult> ReplayOnTestbed(Policy policy, const Load& load,
                                  const std::vector<ModelCluster>& clusters, double time_factor);

}  // namespace skyslurm::trace
