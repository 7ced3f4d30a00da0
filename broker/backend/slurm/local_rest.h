// slurmrestd for a cluster this machine reaches itself (access: rest on the
// home cluster): started by skyslurmd as the user, inetd-style on a pair of
// pipes (rest_auth/local takes the pipes' owner, the user; it refuses to run
// as root), kept alive, so that a submission or a cancel is an HTTP request
// with no process started for it. A few run side by side, each answering one
// request at a time. When slurmrestd cannot run here (not installed, run as
// root, a wrong slurm.conf) the first request says so in its own words and
// every later one at once: the caller goes through sbatch instead.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/ssh/http_wire.h"
#include "broker/util/status.h"

namespace skyslurm::backend {

class LocalRest {
 public:
  // `slurm_conf` empty: the environment's own. `program` empty: slurmrestd
  // from `slurm_bin_dir`'s sibling sbin/, /usr/sbin, /usr/local/sbin or PATH.
  LocalRest(std::string slurm_conf, std::string program = "", std::size_t processes = 4);
  ~LocalRest();
  LocalRest(const LocalRest&) = delete;
  LocalRest& operator=(const LocalRest&) = delete;

  // One request, answered within `timeout`. Unavailable when slurmrestd
  // cannot run (then `unavailable()` is true and the request was never
  // read: the caller may do the same another way without doing it twice);
  // any other error may have reached slurmctld.
  Result<ssh::HttpAnswer> Request(std::string_view method, std::string_view path,
                                  std::string_view body, std::chrono::milliseconds timeout);
  bool unavailable() const;
  // The program run (for messages).
  const std::string& program() const { return program_; }

  // The slurmrestd this finds for a Slurm whose commands are in `bin_dir`
  // ("" = PATH).
  static std::string FindProgram(const std::string& bin_dir);

 private:
  struct Process;
  // One request on one process (a new one when none is idle).
  Result<ssh::HttpAnswer> Exchange(std::string_view method, std::string_view path,
                                   std::string_view body,
                                   std::chrono::steady_clock::time_point deadline);
  Result<std::unique_ptr<Process>> Start();
  // An idle process; a null one when another may be started (counted as
  // running); nullopt when all are busy until `deadline`.
  std::optional<std::unique_ptr<Process>> Take(std::chrono::steady_clock::time_point deadline);
  // Back to the idle ones; null: one fewer running.
  void Give(std::unique_ptr<Process> p);

  std::string slurm_conf_;
  std::string program_;
  std::size_t max_processes_;

  mutable std::mutex mu_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<Process>> idle_;
  std::size_t running_ = 0;  // idle ones and ones answering
  std::optional<Status> unavailable_;
};

}  // namespace skyslurm::backend
