// Slurm's queue as squeue prints it: the jobs, each with its phase read
// from Slurm's state (slurm_state.h), in the neutral form placement and
// skyslurmd read (cluster/queue.h). The formatted output honours a state
// filter; `squeue --json` (kept for fixtures and tools) ignores every filter
// in Slurm 22.05: on a busy cluster it is megabytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/cluster/queue.h"
#include "broker/util/status.h"

namespace skyslurm::backend {

// Strict: a job without the fields used here is an error naming it.
Result<std::vector<cluster::QueuedJob>> ParseSqueueJson(std::string_view json);

// squeue's arguments (after the program) listing the pending and running
// jobs in the form ParseSqueueActive reads.
std::vector<std::string> SqueueActiveArgs();
// The same form for every job squeue still knows, ended ones included (a
// probe, whose lately ended jobs say how much of their limits jobs run, and
// the daemon's queue poll: compact, and filtered on the server, where
// `squeue --json` is megabytes on a busy cluster).
std::vector<std::string> SqueueAllArgs();
// Strict: a record that is not exactly the fields asked for is an error
// quoting it. Times are read as UTC (run squeue with TZ=UTC).
Result<std::vector<cluster::QueuedJob>> ParseSqueueActive(std::string_view text);

// squeue's exit_code field as a wait status (exit code above 8 bits, signal
// below): 22.05's whole number, 23.02+'s "exit:signal", "" (none yet) 0.
std::optional<int> ParseSqueueExitCode(std::string_view text);

// "gres:gpu:A100:4", "gres/gpu:a100=2", "gpu:2" -> type and count; nullopt
// when the TRES string asks for no GPU.
std::optional<std::pair<std::string, std::int64_t>> GpusInTres(std::string_view tres);

}  // namespace skyslurm::backend
