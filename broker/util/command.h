// Running a program: the seam between skyslurm's logic and the commands it
// drives (sbatch, squeue, ssh ...). Logic takes a CommandRunner; the real one
// spawns local processes, tests may pass their own, and the SSH backend runs
// the same Command on a login node.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm {

struct Command {
  // argv[0] is searched on the caller's PATH unless it contains a '/'.
  std::vector<std::string> argv;
  // Written to the program's stdin, which is then closed; without it stdin is
  // /dev/null.
  std::optional<std::string> stdin_data;
  // Changes to the caller's environment for this program.
  std::vector<std::pair<std::string, std::string>> env_set;
  std::vector<std::string> env_unset;
  // Working directory; empty keeps the caller's.
  std::string cwd;
  // The program (and everything in its process group) is killed when it runs
  // longer than this; zero means no limit.
  std::chrono::milliseconds timeout{0};
  // Output beyond this many bytes per stream is read and dropped.
  std::size_t max_output_bytes = std::size_t{64} << 20;
  // Called with each piece of standard output as it arrives (a progress
  // line), on the calling thread; the output is collected all the same.
  // Local programs only: a remote runner calls it once, at the end, if at all.
  std::function<void(std::string_view)> on_output;
};

struct CommandOutput {
  int exit_code = -1;   // valid when term_signal == 0
  int term_signal = 0;  // the signal that ended the program, if one did
  std::string out;
  std::string err;
  bool truncated = false;
  std::chrono::microseconds elapsed{0};

  bool success() const { return term_signal == 0 && exit_code == 0; }
  // "exit status 3" / "killed by signal 9 (Killed)".
  std::string DescribeEnd() const;
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // An error only when the program could not be run (not found, not
  // executable) or exceeded its timeout (kDeadlineExceeded, with what it wrote
  // to stderr). A program that ran and failed is an OK result with its exit
  // status: whether that is an error is the caller's call.
  virtual Result<CommandOutput> Run(const Command& command) = 0;
  // Runs independent commands side by side (none reads another's output) and
  // returns their results in order. By default each goes through Run() on a
  // thread of its own; a runner may do better (over SSH: one channel).
  virtual std::vector<Result<CommandOutput>> RunAll(const std::vector<Command>& commands);
};

// Runs programs on this machine (posix_spawn; the child gets a clean signal
// mask and default dispositions, and no descriptors of ours).
class LocalCommandRunner final : public CommandRunner {
 public:
  Result<CommandOutput> Run(const Command& command) override;
};

// Quotes one word for a POSIX shell: left bare when it is made of safe
// characters only, else single-quoted.
std::string ShellQuote(std::string_view word);
// The words quoted and joined by spaces, ready to paste into `sh -c`.
std::string ShellJoin(const std::vector<std::string>& words);

}  // namespace skyslurm
