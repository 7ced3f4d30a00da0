#include "broker/site/run_as_runner.h"

#include <fmt/format.h>

#include <array>
#include <filesystem>
#include <string_view>

#include "broker/util/acting_user.h"

namespace skyslurm::site {
namespace {

// What skyslurmd-runas runs (runas_main.cc keeps the same list).
constexpr std::array<std::string_view, 8> kHelperPrograms = {
    "sbatch", "scancel", "scontrol", "squeue", "sacct", "sinfo", "sprio", "sshare"};

std::string ProgramName(const Command& command) {
  return command.argv.empty() ? "" : std::filesystem::path(command.argv[0]).filename().string();
}

}  // namespace

bool ChangesJobs(const Command& command) {
  const std::string program = ProgramName(command);
  if (program == "sbatch" || program == "scancel" || program == "salloc" || program == "srun") {
    return true;
  }
  if (program != "scontrol") return false;
  // scontrol's verbs that only read.
  for (std::size_t i = 1; i < command.argv.size(); ++i) {
    const std::string_view word = command.argv[i];
    if (word.starts_with("-")) continue;
    return !(word == "show" || word == "ping" || word == "version" || word == "listpids");
  }
  return false;
}

Result<Command> AsUser(const Command& command, const std::string& user, const std::string& helper) {
  const std::string program = ProgramName(command);
  bool runs = false;
  for (std::string_view p : kHelperPrograms) runs = runs || p == program;
  if (!runs) {
    return PermissionDeniedError(fmt::format(
        "a site's skyslurmd runs only Slurm's client commands as a user, not {} (as {})",
        program.empty() ? "nothing" : program, user));
  }
  Command as_user = command;
  as_user.argv = {helper, "--user", user};
  if (!command.cwd.empty()) {
    as_user.argv.insert(as_user.argv.end(), {"--cwd", command.cwd});
    as_user.cwd.clear();  // entered by the helper as the user, not by us
  }
  as_user.argv.push_back("--");
  as_user.argv.push_back(program);
  as_user.argv.insert(as_user.argv.end(), command.argv.begin() + 1, command.argv.end());
  return as_user;
}

Result<Command> RunAsRunner::Rewritten(const Command& command) const {
  const std::string& user = ActingUser();
  if (!user.empty()) return AsUser(command, user, helper_);
  if (ChangesJobs(command)) {
    return PermissionDeniedError(fmt::format(
        "a site's skyslurmd changes jobs only as their user, and no user was given for {}",
        ProgramName(command)));
  }
  return command;
}

Result<CommandOutput> RunAsRunner::Run(const Command& command) {
  SKY_ASSIGN_OR_RETURN(Command rewritten, Rewritten(command));
  return inner_.Run(rewritten);
}

std::vector<Result<CommandOutput>> RunAsRunner::RunAll(const std::vector<Command>& commands) {
  std::vector<Result<CommandOutput>> results(commands.size(),
                                             Result<CommandOutput>(InternalError("not run")));
  std::vector<Command> runnable;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    auto rewritten = Rewritten(commands[i]);
    if (!rewritten.ok()) {
      results[i] = rewritten.status();
      continue;
    }
    runnable.push_back(std::move(*rewritten));
    where.push_back(i);
  }
  auto ran = inner_.RunAll(runnable);
  for (std::size_t k = 0; k < ran.size(); ++k) results[where[k]] = std::move(ran[k]);
  return results;
}

}  // namespace skyslurm::site
