// A pool of SSH connections to one cluster's login node, reused across
// commands (a reused connection runs a command in a few milliseconds; a new
// one costs a TCP and SSH handshake). Thread-safe: each command takes a
// connection for itself (libssh sessions are not thread-safe), so at most
// `max_connections` commands run at once, one channel per connection, well
// under sshd's MaxSessions. A pooled connection found dead when a command
// starts is replaced and the command retried once; a command that may
// already have run is never retried.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "broker/config/ssh_config.h"
#include "broker/ssh/connection.h"
#include "broker/util/command.h"

namespace skyslurm::ssh {

// The target as ~/.slurm/config describes it.
SshTarget TargetFromConfig(const config::SshHost& host);

struct PoolOptions {
  int max_connections = 4;
  std::chrono::seconds idle_limit{300};  // idle connections older than this are closed
  std::chrono::milliseconds default_timeout{15'000};
  // Commands go through each connection's resident agent (agent_script.h):
  // no sshd session and no shell per command. Off, or on a login node
  // without bash: a channel per command.
  bool agents = true;
};

class SessionPool {
 public:
  explicit SessionPool(SshTarget target, PoolOptions options = {});
  ~SessionPool();
  SessionPool(const SessionPool&) = delete;
  SessionPool& operator=(const SessionPool&) = delete;

  // Runs a command on the login node: argv quoted for the remote shell,
  // env_set/env_unset as shell assignments that no process's arguments
  // show (command_lines.h), cwd through `cd`, stdin_data written to it.
  // Command::timeout (else the pool's default) bounds everything,
  // connecting included.
  Result<CommandOutput> Run(const Command& command);
  // Runs a POSIX sh script on the login node, the script on a stdin (an
  // agent's request, else `sh -s` on a channel): what it holds is in no
  // process's arguments.
  Result<CommandOutput> RunScript(const std::string& script, std::chrono::milliseconds timeout,
                                  std::size_t max_output = std::size_t{64} << 20);
  // Runs independent commands side by side on the login node through one
  // channel (command_batch.h), bounded by the shortest of their timeouts.
  // Commands with stdin data run one after another instead.
  std::vector<Result<CommandOutput>> RunAll(const std::vector<Command>& commands);

  // One HTTP request to slurmrestd on the login node (Connection::RestExec),
  // retried once on a fresh connection when a pooled one turns out dead
  // before the request was read. Unavailable, with what slurmrestd said,
  // when it cannot run there.
  Result<HttpAnswer> Rest(std::string_view method, std::string_view path, std::string_view body,
                          std::chrono::milliseconds timeout);
  // slurmrestd could not start on the login node (none there, or it fails
  // at once); the reason is the error Rest() returned.
  bool RestUnavailable() const;
  // Commands go through resident agents (bash reads their lines), not a
  // channel each (the user's login shell, maybe csh, parses them).
  bool UsesAgents() const;

  // Connects and authenticates (or reuses a live connection): the login
  // node is reachable and accepts us.
  Status Check(std::chrono::milliseconds timeout);

  const SshTarget& target() const { return target_; }
  // Connections opened so far (for tests and benchmarks).
  int connections_opened() const;

 private:
  // A pooled connection (`*reused`) or a new one; the caller Give()s it back.
  Result<std::unique_ptr<Connection>> Acquire(Clock::time_point deadline, bool* reused);
  std::unique_ptr<Connection> Take(bool* reused);
  // A command as one way of running it spells it: its line and its stdin.
  struct Spelled {
    std::string line;
    std::optional<std::string> input;
  };
  // Runs one command (through the connection's agent as `agent` spells
  // it, or on a channel of its own as `channel` does), retrying once on a
  // fresh connection when a pooled one turns out dead before the command
  // was sent. A trace line names it as `what` says.
  Result<CommandOutput> Exec(std::string_view what, const Spelled& channel, const Spelled& agent,
                             Clock::time_point deadline, std::size_t max_output);
  void Give(std::unique_ptr<Connection> c);

  SshTarget target_;
  PoolOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> idle_;
  int in_use_ = 0;
  int opened_ = 0;
  bool agents_unavailable_ = false;  // the login node cannot run one (under mu_)
  bool rest_unavailable_ = false;    // nor slurmrestd (under mu_)
};

// A CommandRunner whose commands run on a cluster's login node.
class SshCommandRunner final : public CommandRunner {
 public:
  explicit SshCommandRunner(SessionPool& pool) : pool_(pool) {}
  Result<CommandOutput> Run(const Command& command) override { return pool_.Run(command); }
  std::vector<Result<CommandOutput>> RunAll(const std::vector<Command>& commands) override {
    return pool_.RunAll(commands);
  }

 private:
  SessionPool& pool_;
};

}  // namespace skyslurm::ssh
