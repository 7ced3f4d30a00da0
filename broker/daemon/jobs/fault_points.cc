#include "broker/daemon/jobs/fault_points.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <string>

namespace skyslurm::daemon {

const std::vector<std::string_view>& FaultPointNames() {
  static const std::vector<std::string_view> names = {
      "submit.recorded",    // the job is in the store, nothing sent
      "submit.intent",      // the intent to submit is written
      "submit.copied",      // the job's folder is copied there, nothing submitted
      "submit.sent",        // sbatch answered, the answer not recorded
      "submit.done",        // recorded, not yet answered to the client
      "spread.recorded",    // an array's parts are in the store, none sent
      "spread.first-sent",  // its first part is submitted and recorded, the others not
      "tasks.intent",       // the intent to move a part's pending tasks is written
      "tasks.held",         // scontrol hold of those tasks answered
      "tasks.cancelled",    // scancel of the held ones answered
      "tasks.released",     // the new part is recorded, not yet submitted
      "move.intent",        // the intent to cancel the pending copy is written
      "move.cancelled",     // scancel --state=PENDING answered
      "move.released",      // the old copy is recorded cancelled, the move not made
      "move.sent",          // the new copy is submitted, not recorded
      "restart.recorded",   // the restart is recorded, nothing sent
      "restart.sent",       // the new copy is submitted, not recorded
      "cancel.intent",      // the intent to cancel is written
      "cancel.sent",        // scancel answered, not recorded
  };
  return names;
}

void FaultPoint([[maybe_unused]] std::string_view name) {
#ifdef SKYSLURM_FAULT_INJECTION
  static const char* wanted = std::getenv("SKYSLURM_FAULT_POINT");
  if (wanted == nullptr || name != wanted) return;
  static std::atomic<long> skip = [] {
    const char* after = std::getenv("SKYSLURM_FAULT_AFTER");
    return after != nullptr ? std::atol(after) : 0L;
  }();
  if (skip.fetch_sub(1) > 0) return;
  // With SKYSLURM_FAULT_MARK=<file>: once only (the file says it happened),
  // so that the daemon started again after the crash runs on.
  if (const char* mark = std::getenv("SKYSLURM_FAULT_MARK"); mark != nullptr) {
    const int fd = ::open(mark, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return;
    ::close(fd);
  }
  // SKYSLURM_FAULT_PAUSE_MS=N: a slow step in place of a crash (a client
  // interrupted while it waits for the answer).
  if (const char* pause = std::getenv("SKYSLURM_FAULT_PAUSE_MS"); pause != nullptr) {
    ::usleep(static_cast<useconds_t>(std::atol(pause)) * 1000);
    return;
  }
  std::raise(SIGKILL);
#endif
}

}  // namespace skyslurm::daemon
