// skyslurm.so: the SPANK plugin's entry points, dispatching to one file per
// context (allocator_context.cc, remote_context.cc). These are the only
// symbols it exports (exports.map). Every hook catches everything: a C++
// exception must never unwind into sbatch, srun or slurmstepd, and an error
// of ours never fails a user's job; only a bad --sky-* value from the user
// is refused, and a script from stdin that cannot be routed.
//
// Slurm's functions (spank_*, slurm_error, slurm_hostlist_*) bind to the
// Slurm library the host process already has loaded; the plugin links
// neither libslurm nor any library of skyslurm's.
#include <string>
#include <vector>

#include "common/sky_options.h"
#include "spank/context.h"

// Everything is built hidden; these few are what Slurm's loader looks up.
#define SKY_SPANK_EXPORT __attribute__((visibility("default")))

extern "C" {
// What SPANK_PLUGIN(skyslurm, 1) would define, with C linkage spelled out:
// in C++ a namespace-scope const has internal linkage.
SKY_SPANK_EXPORT extern const char plugin_name[] = "skyslurm";
SKY_SPANK_EXPORT extern const char plugin_type[] = "spank";
SKY_SPANK_EXPORT extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
}

namespace skyslurm::spank {

PluginState& State() {
  static PluginState state;
  return state;
}

namespace {

using sky::SkyOption;
using sky::SkyOptionSpecs;
using sky::ValidateOptionValue;

int OnSkyOption(int val, const char* optarg, int remote) noexcept {
  try {
    // Values were checked where the user typed them; the remote side only
    // sees what passed.
    if (remote != 0) return 0;
    const std::string problem = ValidateOptionValue(static_cast<SkyOption>(val), optarg);
    if (!problem.empty()) {
      slurm_error("%s", problem.c_str());
      return -1;
    }
    State().sky_option_seen = true;
    return 0;
  } catch (...) {
    slurm_error("skyslurm: internal error while reading a --sky-* option; ignoring it");
    return 0;
  }
}

int RegisterOptions(spank_t sp) {
  for (const auto& spec : SkyOptionSpecs()) {
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

// Runs a hook's body; anything thrown is logged and the job goes on.
template <typename Body>
int Guard(const char* hook, Body body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    slurm_error("skyslurm: internal error in %s: %s; continuing without it", hook, e.what());
  } catch (...) {
    slurm_error("skyslurm: internal error in %s; continuing without it", hook);
  }
  return 0;
}

}  // namespace
}  // namespace skyslurm::spank

using skyslurm::spank::Guard;

extern "C" SKY_SPANK_EXPORT int slurm_spank_init(spank_t sp, int ac, char** av) {
  return Guard("slurm_spank_init", [&] {
    const std::vector<std::string> args(av, av + ac);
    const std::string problem =
        skyslurm::spank::ParsePluginArgs(args, &skyslurm::spank::State().args);
    if (!problem.empty()) {
      // Strict: a plugstack.conf the admin got wrong fails the load loudly.
      slurm_error("%s", problem.c_str());
      return -1;
    }
    return skyslurm::spank::RegisterOptions(sp);
  });
}

extern "C" SKY_SPANK_EXPORT int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  return Guard("slurm_spank_init_post_opt", [&] {
    const spank_context_t ctx = spank_context();
    if (ctx == S_CTX_ALLOCATOR || ctx == S_CTX_LOCAL) return skyslurm::spank::HandToShim(sp);
    return 0;
  });
}

extern "C" SKY_SPANK_EXPORT int slurm_spank_user_init(spank_t sp, int, char**) {
  return Guard("slurm_spank_user_init", [&] { return skyslurm::spank::RemoteUserInit(sp); });
}

extern "C" SKY_SPANK_EXPORT int slurm_spank_task_init(spank_t sp, int, char**) {
  return Guard("slurm_spank_task_init", [&] { return skyslurm::spank::RemoteTaskInit(sp); });
}
