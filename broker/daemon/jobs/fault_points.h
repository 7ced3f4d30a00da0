// Fault injection for the crash tests: at a named point between two steps
// of submit, migrate, restart or cancel, a test build kills its own process
// with SIGKILL when SKYSLURM_FAULT_POINT names that point (and, with
// SKYSLURM_FAULT_AFTER=N, only on its N+1th visit; with
// SKYSLURM_FAULT_MARK=<file>, only while that file does not exist, which the
// crash creates: a daemon restarted with the same environment runs on; with
// SKYSLURM_FAULT_PAUSE_MS=N, it sleeps N ms there in place of dying). Compiled in only with
// -DSKYSLURM_FAULT_INJECTION=ON (the default for development builds; the
// packages turn it off); otherwise a no-op.
#pragma once

#include <string_view>
#include <vector>

namespace skyslurm::daemon {

void FaultPoint(std::string_view name);

// Every point, for the tests that visit each one.
const std::vector<std::string_view>& FaultPointNames();

}  // namespace skyslurm::daemon
