// sbatch --test-only and then sbatch as one POSIX sh script, for a job only
// one cluster can run: its start estimate and its submission in one round
// trip to the login node instead of two. The script holds both batch
// scripts as quoted shell words and hands each to its sbatch through sh's
// own printf (never on the script's stdin, which the first sbatch would
// drain, and never as a process's arguments, which every user of the
// login node can read in /proc). It runs each command in a subshell of its
// own (its own environment changes, then exec), and prints the estimate's
// output (its stdout and stderr together), a marker line with its exit
// status, then the submission's stdout; the submission's stderr and exit
// status are the script's own. The script itself must travel on a stdin
// (an agent's request, `sh -s`), never in an argument.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "broker/util/command.h"
#include "broker/util/status.h"

namespace skyslurm::backend {

// A marker no sbatch output holds: "skyslurm-estimate-" and 16 random hex digits.
std::string NewEstimateMarker();

// The script. Each command line is what a subshell runs (cd, environment,
// exec of the program); each batch script is given to its command's stdin.
struct EstimateThenSubmitParts {
  std::string_view test_only_line, probe_script;
  std::string_view submit_line, job_script;
};
std::string EstimateThenSubmitScript(const EstimateThenSubmitParts& parts, std::string_view marker);

// The estimate's output (in `out`, with its exit status) and the
// submission's (stdout after the marker, the command's stderr and end).
// An error quoting what came when the marker line is missing: the
// estimate did not finish, and the submission was not made.
Result<std::pair<CommandOutput, CommandOutput>> SplitEstimateThenSubmit(const CommandOutput& both,
                                                                        std::string_view marker);

}  // namespace skyslurm::backend
