// The plugin's arguments in plugstack.conf, read strictly: an unknown key
// fails the plugin's load with a message naming it.
//
//   optional /usr/lib/skyslurm/skyslurm.so shim=/usr/libexec/skyslurm/bin env=yes reexec=yes
//
//   shim=DIR   the folder of skyslurm's sbatch/salloc/srun (the shim), which
//              the real commands hand a --sky-* invocation to
//              (default: where this build installs them,
//              <prefix>/libexec/skyslurm/bin, /usr/libexec/skyslurm/bin in
//              the packages)
//   reexec=yes|no  hand invocations to the shim at all (default yes)
//   env=yes|no     set the SKYPILOT_* variables in jobs (default yes)
#pragma once

#include <string>
#include <vector>

namespace skyslurm::spank {

// Where this build installs the shim (SKYSLURM_DEFAULT_SHIM_DIR, set by
// CMake): defined in plugin_args.cc, so that the plugin carries it as data
// (an install check reads it there; an initializer seen inline is compiled
// into immediate stores, which only debug information would show).
extern const char kDefaultShimDir[];

struct PluginArgs {
  std::string shim_dir = kDefaultShimDir;
  bool reexec = true;
  bool env = true;
};

// Returns an empty string when all arguments are valid, else the message.
std::string ParsePluginArgs(const std::vector<std::string>& args, PluginArgs* out);

}  // namespace skyslurm::spank
