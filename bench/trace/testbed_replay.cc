#include "bench/trace/testbed_replay.h"
namespace skyslurm::trace {
Result<SimResult> ReplayOnTestbed(Policy, const Load&, const std::vector<ModelCluster>&, double) {
  return UnimplementedError("not yet");
}
}  // namespace skyslurm::trace
