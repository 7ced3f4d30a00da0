#include "broker/translate/gpus.h"

#include <fmt/format.h>

#include <algorithm>

namespace skyslurm::translate {

std::vector<std::pair<std::string, std::int64_t>> GpuTypesOf(const cluster::Description& target) {
  std::vector<std::pair<std::string, std::int64_t>> types;
  for (const auto& partition : target.partitions) {
    for (const auto& shape : target.ShapesOf(partition)) {
      for (const auto& g : shape.gres) {
        if (g.name != "gpu") continue;
        auto it = std::find_if(types.begin(), types.end(),
                               [&](const auto& t) { return t.first == g.type; });
        if (it == types.end()) {
          types.emplace_back(g.type, g.count);
        } else {
          it->second = std::max(it->second, g.count);
        }
      }
    }
  }
  return types;
}

GpuSpelling SpellGpu(const std::string& asked, const cluster::Description& target,
                     const config::ClusterSettings& settings,
                     const catalog::AcceleratorCatalog& catalog) {
  GpuSpelling result;
  result.canonical = catalog.Canonical(asked).value_or(asked);
  const auto types = GpuTypesOf(target);
  auto has_type = [&](const std::string& t) {
    return std::any_of(types.begin(), types.end(), [&](const auto& x) { return x.first == t; });
  };
  if (auto it = settings.gpu_aliases.find(result.canonical); it != settings.gpu_aliases.end()) {
    if (has_type(it->second)) {
      result.type = it->second;
      result.why = fmt::format("{} spells {} '{}' (configuration)", target.name, result.canonical,
                               it->second);
      return result;
    }
  }
  // The exact spelling first (Slurm matches types case-sensitively), then
  // any spelling of the same accelerator.
  if (has_type(asked)) {
    result.type = asked;
    result.why = "same spelling";
    return result;
  }
  for (const auto& [type, count] : types) {
    if (!type.empty() && catalog.Same(type, asked)) {
      result.type = type;
      result.why = fmt::format("{} spells {} '{}'", target.name, result.canonical, type);
      return result;
    }
  }
  std::string have;
  for (const auto& [type, count] : types) {
    have += fmt::format("{}{} (up to {} per node)", have.empty() ? "" : ", ",
                        type.empty() ? "untyped" : type, count);
  }
  result.why = fmt::format("{} has no {} GPUs ({})", target.name, result.canonical,
                           have.empty() ? "it has no GPUs" : "it has " + have);
  return result;
}

}  // namespace skyslurm::translate
