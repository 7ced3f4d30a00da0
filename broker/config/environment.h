// The process environment as a value: configuration reads variables through
// it, so that tests give their own and never see the machine's.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace skyslurm::config {

class Environment {
 public:
  Environment() = default;
  explicit Environment(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {}
  // A snapshot of this process's environment.
  static Environment FromProcess();

  // The variable's value; an empty value counts as unset.
  std::optional<std::string> Get(std::string_view name) const;
  void Set(std::string name, std::string value) { vars_[std::move(name)] = std::move(value); }
  const std::map<std::string, std::string>& vars() const { return vars_; }

 private:
  std::map<std::string, std::string> vars_;
};

}  // namespace skyslurm::config
