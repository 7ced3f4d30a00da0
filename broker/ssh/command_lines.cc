#include "broker/ssh/command_lines.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace skyslurm::ssh {
namespace {

bool Identifier(std::string_view name) {
  return !name.empty() &&
         (std::isalpha(static_cast<unsigned char>(name[0])) != 0 || name[0] == '_') &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
         });
}

// BASH_FUNC_<name>%% whose value is a function body "() { ... }": the
// function's name, else empty. A name bash would not take as a function's
// (a quote, a space, a shell metacharacter) is not one.
std::string_view ExportedFunction(std::string_view var, std::string_view value) {
  constexpr std::string_view kPrefix = "BASH_FUNC_", kSuffix = "%%";
  if (!var.starts_with(kPrefix) || !var.ends_with(kSuffix)) return {};
  if (!value.starts_with("() {") || !value.ends_with("}")) return {};
  const std::string_view name =
      var.substr(kPrefix.size(), var.size() - kPrefix.size() - kSuffix.size());
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' ||
           c == ':' || c == '@';
  });
  return plain ? name : std::string_view();
}

}  // namespace

std::string EnvironmentAssignments(const Command& command, bool bash) {
  std::string line;
  for (const auto& name : command.env_unset) {
    if (Identifier(name)) line.append("unset -v ").append(name).append("; ");
  }
  for (const auto& [name, value] : command.env_set) {
    if (Identifier(name)) {
      line.append("export ").append(name).append("=").append(ShellQuote(value)).append("; ");
    } else if (const std::string_view function = ExportedFunction(name, value);
               bash && !function.empty()) {
      // bash reads the body as a definition, as it does when it imports one.
      line.append("eval ")
          .append(ShellQuote(std::string(function) + " " + value))
          .append("; export -f ")
          .append(function)
          .append("; ");
    }
  }
  return line;
}

std::string PosixCommandLine(const Command& command) {
  std::string line;
  if (!command.cwd.empty()) line += "cd " + ShellQuote(command.cwd) + " || exit 1; ";
  return line + EnvironmentAssignments(command, /*bash=*/false) + "exec " + ShellJoin(command.argv);
}

bool ChangesEnvironment(const Command& command) {
  return !command.env_set.empty() || !command.env_unset.empty();
}

std::string RemoteCommandLine(const Command& command) {
  std::string line;
  if (!command.cwd.empty()) line += "cd " + ShellQuote(command.cwd) + " && exec ";
  return line + ShellJoin(command.argv);
}

std::string CommandScript(const Command& command) {
  // The data through a pipe from sh's own printf: the whole script is read
  // before anything runs, so the program's stdin is exactly the data.
  const std::string run = "(" + PosixCommandLine(command) + ")";
  if (!command.stdin_data) return run + " </dev/null\n";
  return "printf %s " + ShellQuote(*command.stdin_data) + " | " + run + "\n";
}

}  // namespace skyslurm::ssh
