#include "broker/config/environment.h"

extern char** environ;

namespace skyslurm::config {

Environment Environment::FromProcess() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    vars.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return Environment(std::move(vars));
}

std::optional<std::string> Environment::Get(std::string_view name) const {
  auto it = vars_.find(std::string(name));
  if (it == vars_.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

}  // namespace skyslurm::config
