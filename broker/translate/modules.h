// Finding a cluster's counterpart of an environment module: exact, else the
// same major.minor with a higher patch, else the same major with a higher
// minor (the nearest), else the site's explicit map, else a reason. Renames
// from the configuration (cuda -> CUDA) are tried beside the original name.
#pragma once

#include <string>
#include <vector>

#include "broker/config/settings.h"

namespace skyslurm::translate {

struct ModuleResolution {
  bool found = false;
  std::string module;  // the module to load there (when found)
  std::string why;     // how it was chosen, or why there is none
};

// `wanted` is "name/version" or "name"; `available` the cluster's modules.
ModuleResolution ResolveModule(const std::string& wanted, const std::vector<std::string>& available,
                               const config::ModuleMap& map);

// Compares version strings numerically part by part ("12.10" > "12.9");
// non-numeric parts compare as text. <0, 0, >0.
int CompareVersions(const std::string& a, const std::string& b);

}  // namespace skyslurm::translate
