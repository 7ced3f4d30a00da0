// The job steps a batch script starts itself: its body's `srun` (and
// `salloc`) command lines, and the options on them that are none of
// Slurm's own, which only a SPANK plugin where the step runs can take
// (pyxis' --container-image, a site's option). A cluster whose srun lacks
// one fails that step at once ("unrecognized option").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace skyslurm::job {

struct StepPluginOption {
  int line = 0;         // the script's line
  std::string program;  // "srun" or "salloc"
  std::string name;     // the option's long name, without "--"
};

// Every plugin option on the srun/salloc command lines of the script's body
// (the lines from `from_line` on), in order, once per line and name. A word
// is "srun" or ends with "/srun"; its options are read as that command reads
// them, up to its first operand (the program to run).
std::vector<StepPluginOption> FindStepPluginOptions(std::string_view script, int from_line);

}  // namespace skyslurm::job
