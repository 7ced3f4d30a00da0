// What the router's pieces share (route_command.cc, daemon_route.cc,
// direct_route.cc): its trace and progress line on stderr, how it fails and
// falls back to the real command, and how a waited-for job's end becomes
// the command's exit status.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/config/settings.h"
#include "broker/job/request.h"
#include "broker/util/trace.h"

namespace skyslurm::route {

// SKYSLURM_TRACE=1: the spans of this submission, the client's and
// skyslurmd's, printed on stderr when the command ends.
class TracePrinter {
 public:
  TracePrinter();
  ~TracePrinter();
  TracePrinter(const TracePrinter&) = delete;
  TracePrinter& operator=(const TracePrinter&) = delete;
  const std::shared_ptr<trace::Trace>& trace() const { return trace_; }
  void AddDaemon(const std::string& rendered) { daemon_ += rendered; }

 private:
  std::shared_ptr<trace::Trace> trace_;
  std::string daemon_;
};

// The command's printer while RunRoute runs (null otherwise).
TracePrinter* CurrentTrace();

// A progress line on stderr, when it is a terminal; silent otherwise.
class Progress {
 public:
  explicit Progress(std::string tool);
  ~Progress() { Clear(); }
  void Say(const std::string& what);
  void Clear();
  bool on_terminal() const { return tty_; }

 private:
  std::string tool_;
  bool tty_;
  bool shown_ = false;
};

// The real command on PATH (or in real_bin_dir), never a shim; "" when none.
std::string RealCommandPath(const std::string& tool, const config::Settings& settings);

// The real command is about to replace this process (same PID): its plugin
// must not hand the invocation back to the shim, even when the script still
// says #SBATCH --sky-any-cluster. Keyed to this PID, the mark means nothing
// to any other process that inherits it (the job's own).
void MarkRealCommand();

// Runs the real command in place of this process: the fallback home. The
// --sky-* options go (the plugin may be missing there); the script's own
// words after it stay, whatever they look like.
// Runs `argv` in place of this process (`program` looked up in PATH when
// `search`); returns only when it could not, errno saying why.
void Exec(std::vector<std::string> argv, const std::string& program, bool search = false);
[[noreturn]] void ExecReal(const std::string& real, const std::string& tool, job::Tool jtool,
                           const std::vector<std::string>& args);

// "TOOL: error: MESSAGE" on stderr; the command's exit status (1).
int Fail(const std::string& tool, const std::string& message);

// The job's own time limit in minutes, when it has a finite one.
std::optional<std::int64_t> TimeLimitMinutes(const job::Request& request);

// Slurm's wait status as sbatch --wait exits: the exit code, or 128+signal.
int WaitStatusExit(const std::string& state, int wait_status);

}  // namespace skyslurm::route
