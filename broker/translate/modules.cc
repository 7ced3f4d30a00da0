#include "broker/translate/modules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

namespace skyslurm::translate {
namespace {

std::vector<std::string> Parts(const std::string& version) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : version) {
    if (c == '.' || c == '-' || c == '_') {
      parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  parts.push_back(current);
  return parts;
}

bool IsNumber(const std::string& s) {
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
  const auto want = Parts(wanted);
  if (want.size() <= shared) return std::nullopt;
  std::optional<std::string> best;
  for (const auto& v : versions) {
    const auto parts = Parts(v);
    if (parts.size() <= shared) continue;
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
  const auto pa = Parts(a), pb = Parts(b);
  for (std::size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    if (i >= pa.size()) return -1;
    if (i >= pb.size()) return 1;
    if (IsNumber(pa[i]) && IsNumber(pb[i])) {
      // Compare as numbers without overflow: longer (no leading zeros) wins.
      std::string x = pa[i], y = pb[i];
      x.erase(0, std::min(x.find_first_not_of('0'), x.size() - 1));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size() - 1));
      if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
      if (x != y) return x < y ? -1 : 1;
    } else if (pa[i] != pb[i]) {
      return pa[i] < pb[i] ? -1 : 1;
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
          const std::string rule = shared == 2 ? fmt::format("same {} with a higher patch",
                                                             Parts(version)[0] + "." + Parts(version)[1])
                                               : fmt::format("nearest newer {}.x", Parts(version)[0]);
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
