// Writing to a pipe whose reader has gone raises SIGPIPE. Block it on this
// thread while we write, and swallow a pending one afterwards, so that neither
// the process's disposition nor other threads are touched.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <ctime>

namespace skyslurm {

class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_set_);
    sigaddset(&pipe_set_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    blocked_ = pthread_sigmask(SIG_BLOCK, &pipe_set_, &old_) == 0;
  }
  ~ScopedSigpipeBlock() {
    if (!blocked_) return;
    if (!was_pending_) {
      const timespec zero{0, 0};
      while (sigtimedwait(&pipe_set_, nullptr, &zero) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;

 private:
  sigset_t pipe_set_{};
  sigset_t old_{};
  bool was_pending_ = false;
  bool blocked_ = false;
};

}  // namespace skyslurm
