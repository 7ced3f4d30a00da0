#include "spank/plugin_args.h"

namespace skyslurm::spank {

const char kDefaultShimDir[] = SKYSLURM_DEFAULT_SHIM_DIR;

std::string ParsePluginArgs(const std::vector<std::string>& args, PluginArgs* out) {
  for (const auto& arg : args) {
    const auto eq = arg.find('=');
    const std::string key = arg.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : arg.substr(eq + 1);
    auto yes_no = [&](bool* flag) -> std::string {
      if (value == "yes") {
        *flag = true;
      } else if (value == "no") {
        *flag = false;
      } else {
        return "skyslurm: plugstack.conf argument '" + arg + "': " + key + " takes yes or no";
      }
      return {};
    };
    if (key == "shim") {
      if (value.empty() || value[0] != '/') {
        return "skyslurm: plugstack.conf argument '" + arg +
               "': shim= takes the absolute path of skyslurm's shim folder";
      }
      out->shim_dir = value;
    } else if (key == "reexec") {
      if (auto e = yes_no(&out->reexec); !e.empty()) return e;
    } else if (key == "env") {
      if (auto e = yes_no(&out->env); !e.empty()) return e;
    } else {
      return "skyslurm: unknown plugstack.conf argument '" + arg +
             "' (known: shim=DIR, reexec=yes|no, env=yes|no)";
    }
  }
  return {};
}

}  // namespace skyslurm::spank
