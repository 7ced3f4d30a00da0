#include "broker/backend/slurm/slurm_state.h"

#include <array>
#include <utility>

namespace skyslurm::backend {
namespace {

// Every state Slurm 22.05 prints (src/common/slurm_protocol_defs.c:
// job_state_string and its flag names).
constexpr std::array<std::pair<std::string_view, JobPhase>, 24> kStates = {{
    {"PENDING", JobPhase::kPending},      {"REQUEUED", JobPhase::kPending},
    {"REQUEUE_FED", JobPhase::kPending},  {"REQUEUE_HOLD", JobPhase::kHeld},
    {"SPECIAL_EXIT", JobPhase::kHeld},    {"RESV_DEL_HOLD", JobPhase::kHeld},
    {"RUNNING", JobPhase::kRunning},      {"CONFIGURING", JobPhase::kRunning},
    {"SUSPENDED", JobPhase::kRunning},    {"RESIZING", JobPhase::kRunning},
    {"SIGNALING", JobPhase::kRunning},    {"STOPPED", JobPhase::kRunning},
    {"COMPLETING", JobPhase::kEnding},    {"STAGE_OUT", JobPhase::kEnding},
    {"COMPLETED", JobPhase::kCompleted},  {"FAILED", JobPhase::kFailed},
    {"OUT_OF_MEMORY", JobPhase::kFailed}, {"CANCELLED", JobPhase::kCancelled},
    {"REVOKED", JobPhase::kCancelled},    {"TIMEOUT", JobPhase::kTimeout},
    {"DEADLINE", JobPhase::kTimeout},     {"NODE_FAIL", JobPhase::kNodeFail},
    {"PREEMPTED", JobPhase::kPreempted},  {"BOOT_FAIL", JobPhase::kBootFail},
}};

}  // namespace

JobPhase SlurmPhaseOf(std::string_view state) {
  // sacct writes "CANCELLED by 1000" and "CANCELLED+" (truncated).
  if (const auto space = state.find(' '); space != std::string_view::npos) {
    state = state.substr(0, space);
  }
  if (!state.empty() && state.back() == '+') state.remove_suffix(1);
  for (const auto& [name, phase] : kStates) {
    if (name == state) return phase;
  }
  return JobPhase::kUnknown;
}

}  // namespace skyslurm::backend
