// One SSH connection to a cluster's login node (libssh): connected with
// TCP_NODELAY, the host key checked strictly against the configured
// known_hosts files (unknown or changed: refused, with how to fix it), and
// authenticated with the configured keys, then the agent. Runs one command
// at a time: libssh sessions are not thread-safe, so a connection belongs to
// one caller at a time (SessionPool hands them out).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/config/login_session.h"
#include "broker/ssh/http_wire.h"
#include "broker/util/command.h"
#include "broker/util/status.h"

namespace skyslurm::ssh {

using Clock = std::chrono::steady_clock;

struct SshTarget {
  std::string name;  // the cluster, for messages
  std::string hostname;
  int port = 22;
  std::string user;
  std::vector<std::string> identity_files;
  std::vector<std::string> known_hosts_files;
  // The site's (GlobalKnownHostsFile, /etc/ssh/ssh_known_hosts): read as
  // OpenSSH reads them, after the user's.
  std::vector<std::string> global_known_hosts_files;
  bool identities_only = false;
  std::string proxy_jump;  // run through `ssh -W` when set
  // Through a bastion: the login session there (config/login_session.h),
  // whose master carries the connection while it holds; with
  // `one_time_code` nothing connects without one (FailedPrecondition).
  std::optional<config::LoginSession> session;
  bool one_time_code = false;
  std::chrono::seconds connect_timeout{10};
  std::chrono::seconds keepalive{30};  // TCP keepalive idle time
};

// The ProxyCommand libssh runs to reach the target ("" = a direct
// connection): through the bastion's login session while it holds, else
// `ssh -W` to the bastion (never prompting). FailedPrecondition, with
// "<cluster> needs a one-time code: run skyslurm login <cluster>", for a
// `one_time_code` target without a session: nothing is tried, nothing waits.
Result<std::string> ProxyCommand(const SshTarget& target);

class Connection {
 public:
  // Connects, checks the host key, authenticates, all before `deadline`.
  static Result<std::unique_ptr<Connection>> Open(const SshTarget& target,
                                                  Clock::time_point deadline);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Runs a shell command line on the login node; `stdin_data` is written to
  // it and then closed. `*sent` tells whether the command reached the server
  // (after that, running it again may run it twice).
  Result<CommandOutput> Exec(const std::string& command_line,
                             const std::optional<std::string>& stdin_data,
                             Clock::time_point deadline, std::size_t max_output, bool* sent);

  // Runs a command line through this connection's resident agent
  // (agent_script.h), started on first use on a channel of its own that then
  // stays open. When the agent cannot start, *sent is false and
  // agent_unavailable() tells whether the login node cannot run one at all
  // (no bash); the connection stays usable for Exec.
  Result<CommandOutput> AgentExec(const std::string& agent_line,
                                  const std::optional<std::string>& stdin_data,
                                  Clock::time_point deadline, std::size_t max_output, bool* sent);
  bool agent_unavailable() const { return agent_unavailable_; }

  // Sends one HTTP request (http_wire.h) to this connection's slurmrestd,
  // started on first use on a channel of its own (`slurmrestd -a
  // rest_auth/local`, inetd-style, as the user) that then stays open, and
  // returns its answer. When slurmrestd cannot start, *sent is false and
  // rest_unavailable() tells whether the login node has none at all.
  Result<HttpAnswer> RestExec(const std::string& request, Clock::time_point deadline, bool* sent);
  bool rest_unavailable() const { return rest_unavailable_; }

  bool broken() const { return broken_; }
  Clock::time_point last_used() const { return last_used_; }
  int commands_run() const { return commands_run_; }

 private:
  explicit Connection(const SshTarget& target);
  struct Session;
  std::unique_ptr<Session> session_;
  SshTarget target_;
  Status StartAgent(Clock::time_point deadline);
  // Reads from the agent's channel until `agent_buffer_` holds `bytes`.
  Status FillAgentBuffer(std::size_t bytes, Clock::time_point deadline);
  // Reads what `channel` has (its stderr into `err`, kept short), waiting up
  // to the deadline for something; `who` names it in errors.
  Status ReadMore(void* channel, std::string& out, std::string& err, Clock::time_point deadline,
                  std::string_view who);
  // Opens the agent's (or slurmrestd's) long-lived channel and starts `line` there.
  Status StartResident(bool rest, const std::string& line, std::string_view what);
  Status StartRest();
  // A pooled channel still open (else the connection is marked broken).
  Status CheckPooledChannel(void* channel);
  // Writes all of `data`; *written once any byte went (`what` names it in errors).
  Status WriteAll(void* channel, std::string_view data, std::string_view what, bool* written);
  bool rest_unavailable_ = false;
  std::string rest_buffer_;
  std::string rest_stderr_;
  bool broken_ = false;
  bool agent_unavailable_ = false;
  std::string agent_buffer_;
  std::string agent_stderr_;
  std::uint64_t agent_requests_ = 0;
  Clock::time_point last_used_ = Clock::now();
  int commands_run_ = 0;
};

}  // namespace skyslurm::ssh
