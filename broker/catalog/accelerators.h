// The accelerator catalog: canonical GPU names (H100, A100-80GB, MI300X ...)
// and every spelling clusters use for them: plain names in any case, Slurm's
// autodetect (NVML) type names such as "nvidia_h100_80gb_hbm3" or
// "nvidia_a100-sxm4-80gb", and MIG profiles ("3g.40gb"), which are types of
// their own. A site adds spellings in its configuration.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::catalog {

struct Accelerator {
  std::string name;    // canonical: "H100"
  std::string vendor;  // "nvidia", "amd"
  int memory_gb = 0;   // per device
};

class AcceleratorCatalog {
 public:
  // The built-in catalog.
  AcceleratorCatalog();

  // The canonical name for a spelling, matched case-insensitively: a known
  // alias, an NVML/ROCm autodetect name, or a MIG profile (returned as the
  // profile, "3g.40gb"). nullopt when the name means nothing known.
  std::optional<std::string> Canonical(std::string_view spelling) const;

  // Whether two spellings name the same accelerator.
  bool Same(std::string_view a, std::string_view b) const;

  // A site's own spelling of a canonical name (config `accelerators:`).
  // Unknown canonical names are an error; MIG profiles cannot be aliased.
  Status AddAlias(std::string_view canonical, std::string_view alias);

  const Accelerator* Find(std::string_view canonical) const;
  const std::vector<Accelerator>& accelerators() const { return accelerators_; }

  // "1g.10gb", "3g.40gb": a MIG profile, when `spelling` ends in one.
  static std::optional<std::string> MigProfile(std::string_view spelling);

 private:
  std::vector<Accelerator> accelerators_;
  std::map<std::string, std::string, std::less<>> aliases_;  // lower-case spelling -> canonical
};

}  // namespace skyslurm::catalog
