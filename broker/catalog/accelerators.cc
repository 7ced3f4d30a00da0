#include "broker/util/strings.h"
#include "broker/catalog/accelerators.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace skyslurm::catalog {
namespace {

struct Entry {
  const char* name;
  const char* vendor;
  int memory_gb;
  // Spellings besides the name itself, lower case. NVML names are the
  // device's product name lower-cased with blanks as '_' (how Slurm's
  // gpu/nvml plugin forms GRES types); ROCm names likewise.
  std::vector<const char*> aliases;
};

const std::vector<Entry>& Builtin() {
  static const std::vector<Entry> entries = {
      {"H100", "nvidia", 80,
       {"h100-80gb", "h100-sxm", "h100-sxm5", "h100-pcie", "h100_80gb", "nvidia_h100",
        "nvidia_h100_80gb_hbm3", "nvidia_h100_pcie", "nvidia_h100_80gb_pcie", "h100_80gb_hbm3"}},
      {"H100-NVL", "nvidia", 94, {"h100nvl", "h100_nvl", "nvidia_h100_nvl"}},
      {"H200", "nvidia", 141, {"h200-141gb", "nvidia_h200", "nvidia_h200_141gb_hbm3e",
                               "nvidia_h200_nvl"}},
      {"GH200", "nvidia", 96, {"gh200-96gb", "gh200_480gb", "nvidia_gh200_480gb",
                               "nvidia_gh200_96gb_hbm3", "nvidia_gh200_144g_hbm3e"}},
      {"B200", "nvidia", 180, {"nvidia_b200", "b200-180gb"}},
      {"B300", "nvidia", 288, {"nvidia_b300", "b300-288gb", "nvidia_b300_sxm6_ac"}},
      {"A100", "nvidia", 40,
       {"a100-40gb", "a100-sxm4-40gb", "a100-pcie-40gb", "nvidia_a100-sxm4-40gb",
        "nvidia_a100-pcie-40gb", "nvidia_a100_40gb_pcie", "a100_40gb"}},
      {"A100-80GB", "nvidia", 80,
       {"a100_80gb", "a100-sxm4-80gb", "a100-pcie-80gb", "nvidia_a100-sxm4-80gb",
        "nvidia_a100_80gb_pcie", "nvidia_a100-pcie-80gb", "nvidia_a100_80gb"}},
      {"A10G", "nvidia", 24, {"nvidia_a10g", "a10g-24gb"}},
      {"L4", "nvidia", 24, {"nvidia_l4", "l4-24gb"}},
      {"L40S", "nvidia", 48, {"nvidia_l40s", "l40s-48gb"}},
      {"V100", "nvidia", 16,
       {"v100-16gb", "v100-32gb", "v100-sxm2-16gb", "v100-sxm2-32gb", "tesla_v100-sxm2-16gb",
        "tesla_v100-sxm2-32gb", "tesla_v100-pcie-16gb", "tesla_v100-pcie-32gb", "tesla_v100s-pcie-32gb",
        "nvidia_v100"}},
      {"T4", "nvidia", 16, {"tesla_t4", "nvidia_t4", "t4-16gb"}},
      {"MI250X", "amd", 128, {"amd_instinct_mi250x", "instinct_mi250x", "mi250x-128gb",
                              "amd_instinct_mi250x_mi250"}},
      {"MI300X", "amd", 192, {"amd_instinct_mi300x", "instinct_mi300x", "mi300x-192gb",
                              "amd_instinct_mi300x_oam"}},
  };
  return entries;
}

}  // namespace

AcceleratorCatalog::AcceleratorCatalog() {
  for (const Entry& e : Builtin()) {
    accelerators_.push_back({e.name, e.vendor, e.memory_gb});
    aliases_[Lower(e.name)] = e.name;
    for (const char* alias : e.aliases) aliases_[alias] = e.name;
  }
}

std::optional<std::string> AcceleratorCatalog::MigProfile(std::string_view spelling) {
  // The last '_'/'-' separated part, shaped <digits>g.<digits>gb.
  const auto cut = spelling.find_last_of("_-");
  const std::string profile = Lower(cut == std::string_view::npos ? spelling : spelling.substr(cut + 1));
  std::size_t p = 0;
  auto digits = [&] {
    const std::size_t start = p;
    while (p < profile.size() && std::isdigit(static_cast<unsigned char>(profile[p])) != 0) ++p;
    return p > start;
  };
  if (!digits() || profile.compare(p, 2, "g.") != 0) return std::nullopt;
  p += 2;
  if (!digits() || profile.compare(p, std::string::npos, "gb") != 0) return std::nullopt;
  return profile;
}

std::optional<std::string> AcceleratorCatalog::Canonical(std::string_view spelling) const {
  if (spelling.empty()) return std::nullopt;
  // A MIG slice is its own type, whatever the parent GPU.
  if (auto mig = MigProfile(spelling)) return mig;
  const std::string lower = Lower(spelling);
  if (auto it = aliases_.find(lower); it != aliases_.end()) return it->second;
  // Autodetect names carry a vendor prefix and variants the tables above
  // may not list ("nvidia_h100_80gb_hbm3e"): strip the prefix and try the
  // longest leading model name that is known.
  // Kubernetes labels spell them with dashes (GPU feature discovery's
  // "NVIDIA-H100-80GB-HBM3", GKE's "nvidia-tesla-t4"): the same words.
  std::string rest = lower;
  std::replace(rest.begin(), rest.end(), '-', '_');
  if (auto it = aliases_.find(rest); it != aliases_.end()) return it->second;
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (std::string_view prefix : {"nvidia_", "tesla_", "amd_instinct_", "amd_", "instinct_"}) {
      if (rest.starts_with(prefix)) {
        rest.erase(0, prefix.size());
        stripped = true;
        break;
      }
    }
  }
  if (auto it = aliases_.find(rest); it != aliases_.end()) return it->second;
  // "a100_80gb_pcie" / "a100-sxm4-80gb": the model, then a memory size.
  std::string best;
  for (const Accelerator& a : accelerators_) {
    const std::string name = Lower(a.name);
    if (rest.starts_with(name) && name.size() > best.size() &&
        (rest.size() == name.size() || rest[name.size()] == '_' || rest[name.size()] == '-')) {
      best = a.name;
    }
  }
  if (best.empty()) return std::nullopt;
  // The 80 GB A100 is its own canonical name.
  if (best == "A100" && rest.find("80gb") != std::string::npos) return "A100-80GB";
  if (best == "H100" && rest.find("nvl") != std::string::npos) return "H100-NVL";
  return best;
}

bool AcceleratorCatalog::Same(std::string_view a, std::string_view b) const {
  auto ca = Canonical(a), cb = Canonical(b);
  if (ca && cb) return *ca == *cb;
  return Lower(a) == Lower(b);
}

Status AcceleratorCatalog::AddAlias(std::string_view canonical, std::string_view alias) {
  const Accelerator* target = Find(canonical);
  if (target == nullptr) {
    return InvalidArgumentError(fmt::format(
        "unknown accelerator '{}' (known: H100, H100-NVL, H200, GH200, B200, B300, A100, "
        "A100-80GB, A10G, L4, L40S, V100, T4, MI250X, MI300X)",
        canonical));
  }
  if (MigProfile(alias)) {
    return InvalidArgumentError(
        fmt::format("'{}' is a MIG profile, which is a type of its own", alias));
  }
  const std::string lower = Lower(alias);
  if (auto it = aliases_.find(lower); it != aliases_.end() && it->second != target->name) {
    return InvalidArgumentError(fmt::format("'{}' already names {}", alias, it->second));
  }
  aliases_[lower] = target->name;
  return OkStatus();
}

const Accelerator* AcceleratorCatalog::Find(std::string_view canonical) const {
  const std::string lower = Lower(canonical);
  for (const Accelerator& a : accelerators_) {
    if (Lower(a.name) == lower) return &a;
  }
  return nullptr;
}

}  // namespace skyslurm::catalog
