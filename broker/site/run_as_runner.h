// The commands of a site's skyslurmd, run as the user it acts for
// (util/acting_user.h: ActingUser) through the one privileged step,
// skyslurmd-runas: a job is submitted, held, updated and cancelled by its
// own user, and a request's Slurm commands run as the user who asked, so
// that Slurm's own permissions decide. With no user to act for, the site
// daemon's own reads (every queue, the nodes) run as its own user; what
// would change a job never does: refused.
#pragma once

#include <string>
#include <vector>

#include "broker/util/command.h"

namespace skyslurm::site {

class RunAsRunner final : public CommandRunner {
 public:
  // `helper`: skyslurmd-runas's path; `inner` runs the programs.
  RunAsRunner(std::string helper, CommandRunner& inner)
      : helper_(std::move(helper)), inner_(inner) {}
  Result<CommandOutput> Run(const Command& command) override;
  // Each as the calling thread's acting user (the threads that run them do
  // not have it).
  std::vector<Result<CommandOutput>> RunAll(const std::vector<Command>& commands) override;

 private:
  // `command` as the acting user runs it, or why it may not run.
  Result<Command> Rewritten(const Command& command) const;

  std::string helper_;
  CommandRunner& inner_;
};

// `command` as `user` runs it through `helper` (its program by name: the
// helper runs it from its own folder; its folder given to the helper, which
// enters it as the user). PermissionDenied for a program the helper does
// not run.
Result<Command> AsUser(const Command& command, const std::string& user, const std::string& helper);
// Whether `command` changes a job (submits, cancels, holds, updates): never
// run as the site daemon's own user.
bool ChangesJobs(const Command& command);

}  // namespace skyslurm::site
