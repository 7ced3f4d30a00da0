// skyslurm.so: the SPANK plugin. These are the only symbols it exports
// (exports.map). Every hook catches everything: a C++ exception must never
// unwind into sbatch, srun or slurmstepd, and an error of ours never fails a
// user's job; only a bad --sky-* value from the user is refused.
//
// Slurm's functions (spank_*, slurm_error, slurm_info) bind to the Slurm
// library the host process already has loaded; this file must not link
// libslurm itself.
#include <stdint.h>  // spank.h uses uint32_t without including it

// spank.h declares the slurm_spank_* hooks outside its own extern "C" block;
// without this they would get C++ linkage and never be found by Slurm.
extern "C" {
#include <slurm/spank.h>
}

#include <string>

#include "spank/sky_options.h"

// Everything is built hidden; these few are what Slurm's loader looks up.
#define SKY_SPANK_EXPORT __attribute__((visibility("default")))

extern "C" {
// What SPANK_PLUGIN(skyslurm, 1) would define, with C linkage spelled out:
// in C++ a namespace-scope const has internal linkage.
SKY_SPANK_EXPORT extern const char plugin_name[] = "skyslurm";
SKY_SPANK_EXPORT extern const char plugin_type[] = "spank";
SKY_SPANK_EXPORT extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
}

namespace {

using skyslurm::spank::SkyOption;

int OnSkyOption(int val, const char* optarg, int remote) noexcept {
  try {
    // Values were checked where the user typed them; the remote side only
    // sees what passed.
    if (remote != 0) return 0;
    const std::string problem =
        skyslurm::spank::ValidateOptionValue(static_cast<SkyOption>(val), optarg);
    if (!problem.empty()) {
      slurm_error("%s", problem.c_str());
      return -1;
    }
    return 0;
  } catch (...) {
    slurm_error("skyslurm: internal error while reading a --sky-* option; ignoring it");
    return 0;
  }
}

int RegisterOptions(spank_t sp) {
  for (const auto& spec : skyslurm::spank::SkyOptionSpecs()) {
    struct spank_option option {};
    option.name = const_cast<char*>(spec.name);
    option.arginfo = const_cast<char*>(spec.arginfo);
    option.usage = const_cast<char*>(spec.usage);
    option.has_arg = static_cast<int>(spec.argument);
    option.val = static_cast<int>(spec.id);
    option.cb = OnSkyOption;
    if (spank_option_register(sp, &option) != ESPANK_SUCCESS) {
      slurm_error("skyslurm: cannot register --%s", spec.name);
      return -1;
    }
  }
  return 0;
}

}  // namespace

extern "C" SKY_SPANK_EXPORT int slurm_spank_init(spank_t sp, int ac, char** av) {
  try {
    // Arguments from plugstack.conf are read strictly: this release takes none.
    for (int i = 0; i < ac; ++i) {
      slurm_error("skyslurm: unknown plugstack.conf argument '%s' (this version takes none)",
                  av[i]);
      return -1;
    }
    return RegisterOptions(sp);
  } catch (...) {
    slurm_error("skyslurm: internal error in slurm_spank_init; options not registered");
    return 0;
  }
}
