// A batch script as sbatch accepts it, and the environment modules its body
// loads (`module load|add|swap|switch ...`, `ml ...`), each with the line and
// the byte range it was written at, so that translation can rewrite exactly
// those words and nothing else.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::job {

// Reads a script file and checks it the way sbatch does: it must exist, be
// text (no NUL byte, no DOS line breaks), and start with "#!".
Result<std::string> ReadScriptFile(const std::string& path);
// The same checks on a script already in memory (stdin, --wrap).
Status CheckScriptText(std::string_view text, std::string_view name);

struct ModuleUse {
  int line = 0;               // 1-based
  std::size_t offset = 0;     // byte offset of the module word in the script
  std::size_t length = 0;     // bytes it takes there (quotes included)
  std::string word;           // its value: "cuda/12.1"
  std::string name;           // "cuda"
  std::string version;        // "12.1", or "" for the default version
  std::string verb;           // load, add, swap, switch, ml
  bool dynamic = false;       // contains $, ` or a glob: cannot be resolved ahead
};

// The modules loaded by the script's body from line `from_line` on (lines
// before it are the #SBATCH header). Unloads and other subcommands are not
// loads; `module swap a b` loads b.
std::vector<ModuleUse> FindModuleLoads(std::string_view script, int from_line = 1);

}  // namespace skyslurm::job
