// What the plugin's context files share. Only files of the plugin include
// spank.h (through this header).
#pragma once

#include <stdint.h>  // spank.h uses uint32_t without including it

// spank.h declares the slurm_spank_* hooks outside its own extern "C" block;
// without this they would get C++ linkage and never be found by Slurm.
extern "C" {
#include <slurm/spank.h>
}

#include <string>

#include "spank/plugin_args.h"

namespace skyslurm::spank {

struct PluginState {
  PluginArgs args;
  bool sky_option_seen = false;  // a --sky-* option was given (allocator/local)
};
PluginState& State();

// Remote context (slurmstepd): set SKYPILOT_* for the step (user_init), and
// the GPU count once the task's environment is complete (task_init).
int RemoteUserInit(spank_t sp);
int RemoteTaskInit(spank_t sp);

// Allocator (sbatch, salloc) and local (srun) context: hand an invocation
// with --sky-* options to skyslurm's shim.
int HandToShim(spank_t sp);

}  // namespace skyslurm::spank
