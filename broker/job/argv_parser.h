// Splits an argument list into options and operands exactly as getopt_long
// does for Slurm's commands ("+" mode: options end at the first operand):
// --name=value, --name value, abbreviated long names, -N2, -N 2, bundled
// flags (-HQ), optional arguments (only attached: --nice=5, -k0), "--".
// Every option keeps the words it was written with, byte for byte, so that a
// translation can leave untouched options exactly as the user typed them.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "broker/job/option_table.h"
#include "broker/util/status.h"

namespace skyslurm::job {

struct Occurrence {
  // Points into the OptionTable that parsed it, which must outlive it.
  const OptionSpec* spec = nullptr;  // null for an option the table does not know
  std::string name;                  // the option's long name (as written, if unknown)
  std::optional<std::string> value;
  std::vector<std::string> words;  // the argv words it came from, verbatim
  bool bundled = false;            // shares its word with other short options
  std::size_t first_word = 0;      // index of its first word in the input
  // The heterogeneous job component it belongs to: how many ':' words came
  // before it (0 in a directive; a script's components are its hetjob lines).
  int component = 0;
};

struct ParsedArgs {
  std::vector<Occurrence> options;
  std::vector<std::string> operands;  // from the first operand on (script and its args)
  bool het_separator = false;         // a ":" separated heterogeneous job components
  std::vector<std::string> warnings;  // unknown options kept as they are
};

enum class OperandPolicy {
  kStopAtFirst,  // a command line: the first operand is the script or program
  kReject,       // an #SBATCH line: every word must be an option
};

// Errors are worded as getopt and sbatch word them ("option '--time' requires
// an argument"), prefixed by where the words came from: "file:line" when
// `line` > 0, else `source` alone ("command line").
Result<ParsedArgs> ParseArgs(const OptionTable& table, std::span<const std::string> args,
                             OperandPolicy policy, std::string_view source, int line = 0);

// `words` without the options whose id is in `ids` (bundled short options
// are split when one of them goes); operands are kept. Words that do not
// parse are returned as they are.
std::vector<std::string> RemoveOptions(const OptionTable& table,
                                       const std::vector<std::string>& words,
                                       const std::vector<Opt>& ids);
// The same, for the options `drop` says go (by name, for options the
// broker does not interpret).
std::vector<std::string> RemoveOptionsIf(const OptionTable& table,
                                         const std::vector<std::string>& words,
                                         const std::function<bool(const Occurrence&)>& drop);

}  // namespace skyslurm::job
