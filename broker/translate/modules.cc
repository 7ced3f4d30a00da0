#include "broker/translate/modules.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <cctype>
#include <optional>

namespace skyslurm::translate {
namespace {

// A version's parts ("12.4.1" -> 12, 4, 1), without allocating: modules are
// resolved for every job and every cluster.
struct Parts {
  std::array<std::string_view, 8> part{};
  std::size_t size = 0;
  explicit Parts(std::string_view version) {
    std::size_t start = 0;
    for (std::size_t i = 0; i <= version.size(); ++i) {
      if (i == version.size() || version[i] == '.' || version[i] == '-' || version[i] == '_') {
        if (size < part.size()) part[size++] = version.substr(start, i - start);
        start = i + 1;
      }
    }
  }
  std::string_view operator[](std::size_t i) const { return part[i]; }
};

bool IsNumber(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

std::pair<std::string, std::string> Split(const std::string& module) {
  const auto slash = module.find('/');
  if (slash == std::string::npos) return {module, ""};
  return {module.substr(0, slash), module.substr(slash + 1)};
}

// Versions of `name` on the cluster.
std::vector<std::string> VersionsOf(const std::string& name, const std::vector<std::string>& available) {
  std::vector<std::string> versions;
  for (const auto& m : available) {
    auto [n, v] = Split(m);
    if (n == name && !v.empty()) versions.push_back(v);
  }
  return versions;
}

bool HasName(const std::string& name, const std::vector<std::string>& available) {
  return std::any_of(available.begin(), available.end(),
                     [&](const std::string& m) { return Split(m).first == name; });
}

bool Has(const std::string& module, const std::vector<std::string>& available) {
  return std::find(available.begin(), available.end(), module) != available.end();
}

// The smallest version above `wanted` that shares its first `shared` parts.
std::optional<std::string> NearestNewer(const std::string& wanted, std::size_t shared,
                                        const std::vector<std::string>& versions) {
  const Parts want(wanted);
  if (want.size <= shared) return std::nullopt;
  std::optional<std::string> best;
  for (const auto& v : versions) {
    const Parts parts(v);
    if (parts.size <= shared) continue;
    bool same_prefix = true;
    for (std::size_t i = 0; i < shared; ++i) {
      if (parts[i] != want[i]) same_prefix = false;
    }
    if (!same_prefix || CompareVersions(v, wanted) <= 0) continue;
    if (!best || CompareVersions(v, *best) < 0) best = v;
  }
  return best;
}

}  // namespace

int CompareVersions(const std::string& a, const std::string& b) {
  const Parts pa(a), pb(b);
  for (std::size_t i = 0; i < std::max(pa.size, pb.size); ++i) {
    if (i >= pa.size) return -1;
    if (i >= pb.size) return 1;
    std::string_view x = pa[i], y = pb[i];
    if (IsNumber(x) && IsNumber(y)) {
      // As numbers, without overflow: drop leading zeros, longer is larger.
      while (x.size() > 1 && x.front() == '0') x.remove_prefix(1);
      while (y.size() > 1 && y.front() == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
      if (x != y) return x < y ? -1 : 1;
    } else if (x != y) {
      return x < y ? -1 : 1;
    }
  }
  return 0;
}

ModuleResolution ResolveModule(const std::string& wanted, const std::vector<std::string>& available,
                               const config::ModuleMap& map) {
  const auto [name, version] = Split(wanted);
  std::vector<std::string> names = {name};
  if (auto it = map.renames.find(name); it != map.renames.end() && it->second != name) {
    names.push_back(it->second);
  }
  auto listing = [&] {
    std::vector<std::string> same;
    for (const auto& n : names) {
      for (const auto& m : available) {
        if (Split(m).first == n) same.push_back(m);
      }
    }
    if (same.empty()) return std::string("no module of that name");
    std::string text;
    for (const auto& m : same) text += (text.empty() ? "" : ", ") + m;
    return "it has " + text;
  };

  if (version.empty()) {
    for (const auto& n : names) {
      if (HasName(n, available)) {
        return {true, n, n == name ? "present" : fmt::format("renamed {} -> {} (configuration)", name, n)};
      }
    }
  } else {
    for (const auto& n : names) {
      const std::string candidate = n + "/" + version;
      if (Has(candidate, available)) {
        return {true, candidate,
                n == name ? "present" : fmt::format("renamed {} -> {} (configuration)", name, n)};
      }
    }
    for (std::size_t shared : {std::size_t{2}, std::size_t{1}}) {
      for (const auto& n : names) {
        if (auto v = NearestNewer(version, shared, VersionsOf(n, available))) {
          const Parts parts(version);
          const std::string rule = shared == 2
                                       ? fmt::format("same {}.{} with a higher patch", parts[0], parts[1])
                                       : fmt::format("nearest newer {}.x", parts[0]);
          return {true, n + "/" + *v,
                  n == name ? rule : fmt::format("{}, renamed {} -> {} (configuration)", rule, name, n)};
        }
      }
    }
  }
  if (auto it = map.versions.find(wanted); it != map.versions.end()) {
    if (Has(it->second, available) || HasName(it->second, available)) {
      return {true, it->second, fmt::format("mapped {} -> {} (configuration)", wanted, it->second)};
    }
    return {false, "", fmt::format("the configured counterpart {} is not there either ({})",
                                   it->second, listing())};
  }
  return {false, "", fmt::format("no counterpart ({})", listing())};
}

}  // namespace skyslurm::translate
