// While one lives, the signals that stop a command (SIGINT, SIGTERM,
// SIGHUP, SIGQUIT) are held back from the calling thread and the threads it
// starts meanwhile: a submission in flight is not cut between "sent" and
// "told", where the job would exist and nobody would know its id. Whether
// one came is asked with Arrived() (the caller then cancels what it made);
// it is delivered when the holder goes, and ends the command as it would
// have.
#pragma once

#include <signal.h>

namespace skyslurm::shim {

class StopSignalsHeld {
 public:
  StopSignalsHeld() {
    sigemptyset(&held_);
    for (const int sig : kStops) sigaddset(&held_, sig);
    pthread_sigmask(SIG_BLOCK, &held_, &before_);
  }
  ~StopSignalsHeld() { pthread_sigmask(SIG_SETMASK, &before_, nullptr); }
  StopSignalsHeld(const StopSignalsHeld&) = delete;
  StopSignalsHeld& operator=(const StopSignalsHeld&) = delete;

  // Whether one arrived meanwhile (still pending, delivered at the end).
  bool Arrived() const {
    sigset_t pending;
    if (sigpending(&pending) != 0) return false;
    for (const int sig : kStops) {
      if (sigismember(&pending, sig) == 1 && sigismember(&before_, sig) == 0) return true;
    }
    return false;
  }

 private:
  static constexpr int kStops[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  sigset_t held_{};
  sigset_t before_{};
};

}  // namespace skyslurm::shim
