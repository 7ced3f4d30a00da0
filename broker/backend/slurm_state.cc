#include "broker/backend/slurm_state.h"

#include <array>
#include <utility>

namespace skyslurm::backend {
namespace {

// Every state Slurm 22.05 prints (src/common/slurm_protocol_defs.c:
// job_state_string and its flag names).
constexpr std::array<std::pair<std::string_view, SlurmPhase>, 24> kStates = {{
    {"PENDING", SlurmPhase::kPending},      {"REQUEUED", SlurmPhase::kPending},
    {"REQUEUE_FED", SlurmPhase::kPending},  {"REQUEUE_HOLD", SlurmPhase::kHeld},
    {"SPECIAL_EXIT", SlurmPhase::kHeld},    {"RESV_DEL_HOLD", SlurmPhase::kHeld},
    {"RUNNING", SlurmPhase::kRunning},      {"CONFIGURING", SlurmPhase::kRunning},
    {"SUSPENDED", SlurmPhase::kRunning},    {"RESIZING", SlurmPhase::kRunning},
    {"SIGNALING", SlurmPhase::kRunning},    {"STOPPED", SlurmPhase::kRunning},
    {"COMPLETING", SlurmPhase::kEnding},    {"STAGE_OUT", SlurmPhase::kEnding},
    {"COMPLETED", SlurmPhase::kCompleted},  {"FAILED", SlurmPhase::kFailed},
    {"OUT_OF_MEMORY", SlurmPhase::kFailed}, {"CANCELLED", SlurmPhase::kCancelled},
    {"REVOKED", SlurmPhase::kCancelled},    {"TIMEOUT", SlurmPhase::kTimeout},
    {"DEADLINE", SlurmPhase::kTimeout},     {"NODE_FAIL", SlurmPhase::kNodeFail},
    {"PREEMPTED", SlurmPhase::kPreempted},  {"BOOT_FAIL", SlurmPhase::kBootFail},
}};

}  // namespace

SlurmPhase PhaseOf(std::string_view state) {
  // sacct writes "CANCELLED by 1000" and "CANCELLED+" (truncated).
  if (const auto space = state.find(' '); space != std::string_view::npos) {
    state = state.substr(0, space);
  }
  if (!state.empty() && state.back() == '+') state.remove_suffix(1);
  for (const auto& [name, phase] : kStates) {
    if (name == state) return phase;
  }
  return SlurmPhase::kUnknown;
}

bool IsLive(SlurmPhase phase) { return !IsFinal(phase); }

bool IsFinal(SlurmPhase phase) {
  switch (phase) {
    case SlurmPhase::kPending:
    case SlurmPhase::kHeld:
    case SlurmPhase::kRunning:
    case SlurmPhase::kEnding:
    case SlurmPhase::kUnknown:
      return false;
    default:
      return true;
  }
}

bool IsWaiting(SlurmPhase phase) {
  return phase == SlurmPhase::kPending || phase == SlurmPhase::kHeld;
}

bool HasNodes(SlurmPhase phase) {
  return phase == SlurmPhase::kRunning || phase == SlurmPhase::kEnding;
}

bool IsInfrastructureFailure(SlurmPhase phase) {
  return phase == SlurmPhase::kNodeFail || phase == SlurmPhase::kPreempted ||
         phase == SlurmPhase::kBootFail;
}

}  // namespace skyslurm::backend
