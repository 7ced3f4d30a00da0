#include "broker/ssh/connection.h"

#include <fmt/format.h>
#include <libssh/libssh.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string_view>

#include "broker/ssh/agent_script.h"

namespace skyslurm::ssh {

struct Connection::Session {
  ssh_session s = nullptr;
  ssh_channel agent = nullptr;  // the resident agent's channel, once started
  ssh_channel rest = nullptr;   // slurmrestd's channel, once started
  ~Session() {
    for (ssh_channel ch : {agent, rest}) {
      if (ch == nullptr) continue;
      ssh_channel_close(ch);
      ssh_channel_free(ch);
    }
    if (s != nullptr) {
      ssh_disconnect(s);
      ssh_free(s);
    }
  }
};

namespace {

long RemainingMs(Clock::time_point deadline) {
  return std::max<long>(
      0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
}

std::string Endpoint(const SshTarget& t) {
  return t.port == 22 ? t.hostname : fmt::format("[{}]:{}", t.hostname, t.port);
}

std::string Fingerprint(ssh_session s, std::string* key_type) {
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(s, &key) != SSH_OK) return "(unknown key)";
  unsigned char* hash = nullptr;
  std::size_t len = 0;
  std::string out = "(unknown key)";
  if (key_type != nullptr) *key_type = ssh_key_type_to_char(ssh_key_type(key));
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &len) == 0) {
    char* text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, len);
    if (text != nullptr) {
      out = text;
      ssh_string_free_char(text);
    }
    ssh_clean_pubkey_hash(&hash);
  }
  ssh_key_free(key);
  return out;
}

// Checks the server's key against every known_hosts file: one that knows
// this key accepts it; otherwise a file that knows another key for the host
// means it changed; otherwise it is unknown. Both are refused.
Status CheckHostKey(ssh_session s, const SshTarget& t) {
  bool changed = false, other_type = false;
  std::string changed_in;
  std::vector<const std::string*> all;
  for (const auto& file : t.known_hosts_files) all.push_back(&file);
  for (const auto& file : t.global_known_hosts_files) all.push_back(&file);
  for (const std::string* each : all) {
    const std::string& file = *each;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) continue;
    ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, file.c_str());
    switch (ssh_session_is_known_server(s)) {
      case SSH_KNOWN_HOSTS_OK:
        return OkStatus();
      case SSH_KNOWN_HOSTS_CHANGED:
        changed = true;
        changed_in = file;
        break;
      case SSH_KNOWN_HOSTS_OTHER:
        other_type = true;
        break;
      default:
        break;
    }
  }
  std::string type;
  const std::string fingerprint = Fingerprint(s, &type);
  const std::string files = [&] {
    std::string f;
    for (const std::string* k : all) f.append(f.empty() ? "" : ", ").append(*k);
    return f;
  }();
  if (changed) {
    return UnauthenticatedError(fmt::format(
        "{} ({}): the login node's host key CHANGED (it now offers {} {}); refusing to connect. "
        "Someone may be intercepting the connection, or the login node was reinstalled: check "
        "the new fingerprint with your admins, then remove the old key with: ssh-keygen -R '{}' "
        "-f {}",
        t.name, Endpoint(t), type, fingerprint, Endpoint(t), changed_in));
  }
  return UnauthenticatedError(fmt::format(
      "{} ({}): the login node's host key is not known{} (it offers {} {}; known_hosts: {}); "
      "refusing to connect. Ask your admins for the login node's fingerprint, and only if it is "
      "this one add the key (ssh-keyscan prints whatever the host offers, an interceptor's "
      "too): ssh-keyscan -p {} {} >> {}",
      t.name, Endpoint(t), other_type ? " for this key type" : "", type, fingerprint,
      files.empty() ? "none configured" : files, t.port, t.hostname,
      t.known_hosts_files.empty() ? "~/.ssh/known_hosts" : t.known_hosts_files.front()));
}

Status Authenticate(ssh_session s, const SshTarget& t) {
  std::vector<std::string> tried;
  for (const auto& file : t.identity_files) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) continue;
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(file.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK) {
      tried.push_back(file + " (unreadable or passphrase-protected)");
      continue;
    }
    const int rc = ssh_userauth_publickey(s, nullptr, key);
    ssh_key_free(key);
    if (rc == SSH_AUTH_SUCCESS) return OkStatus();
    if (rc == SSH_AUTH_ERROR) {
      return UnavailableError(
          fmt::format("{}: authentication failed: {}", t.name, ssh_get_error(s)));
    }
    tried.push_back(file);
  }
  if (!t.identities_only && std::getenv("SSH_AUTH_SOCK") != nullptr) {
    if (ssh_userauth_agent(s, nullptr) == SSH_AUTH_SUCCESS) return OkStatus();
    tried.push_back("the ssh agent's keys");
  }
  std::string list;
  for (const auto& k : tried) list += (list.empty() ? "" : ", ") + k;
  return PermissionDeniedError(fmt::format(
      "{}: {}@{} refused every key (tried: {}). Check IdentityFile in ~/.slurm/config and that "
      "the public key is in ~/.ssh/authorized_keys on the login node",
      t.name, t.user, Endpoint(t), list.empty() ? "no key file exists" : list));
}

// Opens a session channel without a ~40 ms stall on fresh connections.
// Right after authentication OpenSSH's sshd sends a packet of its own (its
// host keys); having just sent, our kernel delays the ACK for it, and sshd,
// whose non-interactive sessions keep Nagle on, holds the small channel
// confirmation until that ACK comes (the delayed-ACK timer, ~40 ms). Asking
// for quick ACKs while the open is in flight lets it answer at once: a fresh
// connection's first command took 68 ms here, now 28 ms.
int OpenSessionChannel(ssh_session s, ssh_channel ch) {
  const int fd = ssh_get_fd(s);
  const auto quick_ack = [fd] {
    const int one = 1;
    if (fd >= 0) setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
  };
  ssh_set_blocking(s, 0);
  int rc = ssh_channel_open_session(ch);
  for (int i = 0; rc == SSH_AGAIN && i < 50; ++i) {
    quick_ack();  // not sticky: the kernel leaves quick-ACK mode on its own
    if (ssh_channel_poll_timeout(ch, 1, 0) == SSH_ERROR) break;
    rc = ssh_channel_open_session(ch);
  }
  ssh_set_blocking(s, 1);
  // Still pending after 50 ms: wait as usual (the session's timeout).
  if (rc == SSH_AGAIN) rc = ssh_channel_open_session(ch);
  return rc;
}

enum class ChannelRead { kNothing, kGot, kFailed };

// Reads what the channel holds now, stdout then stderr, without waiting;
// each chunk to take(is_stderr, chunk).
ChannelRead ReadAvailable(ssh_channel ch, const std::function<void(bool, std::string_view)>& take) {
  std::array<char, 32768> buf;  // not cleared: only what was read is used
  ChannelRead read = ChannelRead::kNothing;
  for (int is_err = 0; is_err <= 1; ++is_err) {
    int n;
    while ((n = ssh_channel_read_nonblocking(ch, buf.data(), buf.size(), is_err)) > 0) {
      take(is_err != 0, std::string_view(buf.data(), static_cast<std::size_t>(n)));
      read = ChannelRead::kGot;
    }
    if (n == SSH_ERROR) return ChannelRead::kFailed;
  }
  return read;
}

// The command's exit status, or -1 when it sent none (killed by a signal,
// or sshd gone). libssh 0.11 (Debian 13) deprecates the call 0.10 (Debian
// 12) has for it.
int ChannelExitStatus(ssh_channel ch) {
#if LIBSSH_VERSION_INT >= SSH_VERSION_INT(0, 11, 0)
  uint32_t code = 0;
  char* signal = nullptr;
  int core_dumped = 0;
  const int got = ssh_channel_get_exit_state(ch, &code, &signal, &core_dumped);
  const bool signalled = signal != nullptr;
  ssh_string_free_char(signal);
  if (got != SSH_OK || signalled) return -1;
  return static_cast<int>(code);
#else
  return ssh_channel_get_exit_status(ch);
#endif
}

}  // namespace

Result<std::string> ProxyCommand(const SshTarget& target) {
  if (target.session) return config::SessionProxyCommand(*target.session, target.one_time_code);
  if (target.proxy_jump.empty()) return std::string();
  return fmt::format("ssh -o BatchMode=yes -W [%h]:%p {}", ShellQuote(target.proxy_jump));
}

Result<std::unique_ptr<Connection>> Connection::Open(const SshTarget& target,
                                                     Clock::time_point deadline) {
  std::unique_ptr<Connection> c(new Connection(target));
  c->session_ = std::make_unique<Session>();
  ssh_session s = ssh_new();
  if (s == nullptr) return InternalError("libssh: cannot create a session");
  c->session_->s = s;
  const int port = target.port;
  const int yes = 1, log = SSH_LOG_NOLOG;
  const long timeout_s = std::max<long>(
      1, std::min<long>(target.connect_timeout.count(), (RemainingMs(deadline) + 999) / 1000));
  ssh_options_set(s, SSH_OPTIONS_HOST, target.hostname.c_str());
  ssh_options_set(s, SSH_OPTIONS_PORT, &port);
  if (!target.user.empty()) ssh_options_set(s, SSH_OPTIONS_USER, target.user.c_str());
  // Only what skyslurm was configured with: no ~/.ssh/config. Known hosts
  // files are checked one by one (CheckHostKey), the site's included.
  const int no = 0;
  ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no);
  ssh_options_set(s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
  // Without TCP_NODELAY every command on a reused session waits ~45 ms.
  ssh_options_set(s, SSH_OPTIONS_NODELAY, &yes);
  ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout_s);
  ssh_options_set(s, SSH_OPTIONS_LOG_VERBOSITY, &log);
  SKY_ASSIGN_OR_RETURN(const std::string proxy, ProxyCommand(target));
  if (!proxy.empty()) ssh_options_set(s, SSH_OPTIONS_PROXYCOMMAND, proxy.c_str());
  if (RemainingMs(deadline) == 0) {
    return DeadlineExceededError(fmt::format("{}: no time left to connect", target.name));
  }
  if (ssh_connect(s) != SSH_OK) {
    const std::string why = ssh_get_error(s);
    if (why.find("resolve") != std::string::npos) {
      return UnavailableError(fmt::format(
          "{}: cannot resolve the login node's name '{}' ({}); check HostName in ~/.slurm/config",
          target.name, target.hostname, why));
    }
    if (why.find("refused") != std::string::npos) {
      return UnavailableError(
          fmt::format("{}: the login node {} refused the connection (no sshd listening there?)",
                      target.name, Endpoint(target)));
    }
    if (why.find("imeout") != std::string::npos || why.find("timed out") != std::string::npos) {
      return UnavailableError(fmt::format("{}: the login node {} did not answer within {} s",
                                          target.name, Endpoint(target), timeout_s));
    }
    return UnavailableError(
        fmt::format("{}: cannot connect to {}: {}", target.name, Endpoint(target), why));
  }
  // TCP keepalive, so that a dead peer is noticed on an idle pooled session.
  const int fd = ssh_get_fd(s);
  if (fd >= 0) {
    const int idle = static_cast<int>(target.keepalive.count()), interval = 10, count = 3;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &yes, sizeof yes);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  }
  SKY_RETURN_IF_ERROR(CheckHostKey(s, target));
  SKY_RETURN_IF_ERROR(Authenticate(s, target));
  return c;
}

Connection::Connection(const SshTarget& target) : target_(target) {}
Connection::~Connection() = default;

Result<CommandOutput> Connection::Exec(const std::string& command_line,
                                       const std::optional<std::string>& stdin_data,
                                       Clock::time_point deadline, std::size_t max_output,
                                       bool* sent) {
  *sent = false;
  ssh_session s = session_->s;
  const auto started = Clock::now();
  last_used_ = started;
  auto fail = [&](std::string what) {
    broken_ = true;
    return UnavailableError(fmt::format("{}: {}: {}", target_.name, what, ssh_get_error(s)));
  };
  ssh_channel ch = ssh_channel_new(s);
  if (ch == nullptr) return fail("cannot open a channel");
  struct ChannelGuard {
    ssh_channel ch;
    ~ChannelGuard() {
      ssh_channel_close(ch);
      ssh_channel_free(ch);
    }
  } guard{ch};
  if (OpenSessionChannel(s, ch) != SSH_OK) return fail("cannot open a session channel");
  if (ssh_channel_request_exec(ch, command_line.c_str()) != SSH_OK) {
    return fail("cannot start the command");
  }
  *sent = true;
  ++commands_run_;
  if (stdin_data && !stdin_data->empty()) {
    std::size_t off = 0;
    while (off < stdin_data->size()) {
      const auto chunk =
          static_cast<uint32_t>(std::min<std::size_t>(stdin_data->size() - off, 32768));
      const int n = ssh_channel_write(ch, stdin_data->data() + off, chunk);
      if (n == SSH_ERROR) return fail("cannot send the command's input");
      off += static_cast<std::size_t>(n);
    }
  }
  ssh_channel_send_eof(ch);

  CommandOutput out;
  while (true) {
    const ChannelRead read = ReadAvailable(ch, [&](bool is_err, std::string_view chunk) {
      std::string& sink = is_err ? out.err : out.out;
      const auto room = sink.size() < max_output ? max_output - sink.size() : 0;
      if (chunk.size() > room) out.truncated = true;
      sink.append(chunk.substr(0, room));
    });
    if (read == ChannelRead::kFailed) return fail("the connection failed while reading");
    const bool got = read == ChannelRead::kGot;
    if (ssh_channel_is_eof(ch) != 0 && !got) break;
    if (ssh_channel_is_open(ch) == 0) break;
    const long left = RemainingMs(deadline);
    if (left == 0) {
      ssh_channel_request_send_signal(ch, "TERM");
      broken_ = true;  // unknown state: do not reuse
      return DeadlineExceededError(
          fmt::format("{}: the command did not finish in time on the login node{}", target_.name,
                      out.err.empty() ? "" : "; it said: " + out.err.substr(0, 400)));
    }
    if (!got) {
      // Wait through libssh, never on the socket itself: libssh may already
      // hold the rest of the output or the EOF in its own buffers, and a
      // poll on the socket then sleeps the whole interval (it cost 1 s on
      // one large squeue --json in three). It wakes for stdout or the end;
      // stderr is picked up within the short interval.
      const int wait_ms = static_cast<int>(std::min<long>(left, 50));
      if (ssh_channel_poll_timeout(ch, wait_ms, 0) == SSH_ERROR) {
        return fail("the connection failed while waiting for output");
      }
    }
  }
  out.exit_code = ChannelExitStatus(ch);
  if (out.exit_code < 0) {
    // No exit status: the command was killed by a signal (or sshd died).
    out.exit_code = -1;
    out.term_signal = 9;
  }
  out.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
  last_used_ = Clock::now();
  return out;
}

Status Connection::CheckPooledChannel(void* channel) {
  // A pooled channel whose connection died while idle (the login node
  // restarted): noticed now, before anything is sent, so that the pool
  // retries on a fresh connection.
  auto ch = static_cast<ssh_channel>(channel);
  if (ssh_channel_poll_timeout(ch, 0, 0) == SSH_ERROR || ssh_channel_is_eof(ch) != 0 ||
      ssh_channel_is_open(ch) == 0) {
    broken_ = true;
    return UnavailableError(fmt::format("{}: the pooled connection was lost: {}", target_.name,
                                        ssh_get_error(session_->s)));
  }
  return OkStatus();
}

Status Connection::WriteAll(void* channel, std::string_view data, std::string_view what,
                            bool* written) {
  auto ch = static_cast<ssh_channel>(channel);
  std::size_t off = 0;
  while (off < data.size()) {
    const auto chunk = static_cast<uint32_t>(std::min<std::size_t>(data.size() - off, 32768));
    const int n = ssh_channel_write(ch, data.data() + off, chunk);
    if (n == SSH_ERROR) {
      broken_ = true;
      return UnavailableError(
          fmt::format("{}: cannot send {}: {}", target_.name, what, ssh_get_error(session_->s)));
    }
    *written = true;
    off += static_cast<std::size_t>(n);
  }
  return OkStatus();
}

Status Connection::ReadMore(void* channel, std::string& out, std::string& err,
                            Clock::time_point deadline, std::string_view who) {
  auto ch = static_cast<ssh_channel>(channel);
  while (true) {
    bool got = false;  // stdout only: stderr alone is no answer
    const ChannelRead read = ReadAvailable(ch, [&](bool is_err, std::string_view chunk) {
      // The program's own complaints (stderr) are kept for the error message.
      if (is_err) {
        if (err.size() < 4096) err.append(chunk);
      } else {
        out.append(chunk);
        got = true;
      }
    });
    if (read == ChannelRead::kFailed) {
      broken_ = true;
      return UnavailableError(fmt::format("{}: the connection failed while reading: {}",
                                          target_.name, ssh_get_error(session_->s)));
    }
    if (got) return OkStatus();
    if (ssh_channel_is_eof(ch) != 0 || ssh_channel_is_open(ch) == 0) {
      broken_ = true;
      // Its last words, without the lines it logs for every request.
      std::string said = err.size() > 400 ? err.substr(err.size() - 400) : err;
      while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
      return UnavailableError(
          fmt::format("{}: {} ended{}", target_.name, who, said.empty() ? "" : ": " + said));
    }
    const long left = RemainingMs(deadline);
    if (left == 0) {
      broken_ = true;  // a request still running there: this connection goes
      return DeadlineExceededError(
          fmt::format("{}: the command did not finish in time on the login node", target_.name));
    }
    if (ssh_channel_poll_timeout(ch, static_cast<int>(std::min<long>(left, 50)), 0) == SSH_ERROR) {
      broken_ = true;
      return UnavailableError(fmt::format("{}: the connection failed while waiting for output: {}",
                                          target_.name, ssh_get_error(session_->s)));
    }
  }
}

Status Connection::FillAgentBuffer(std::size_t bytes, Clock::time_point deadline) {
  while (agent_buffer_.size() < bytes) {
    SKY_RETURN_IF_ERROR(
        ReadMore(session_->agent, agent_buffer_, agent_stderr_, deadline, "the agent"));
  }
  return OkStatus();
}

Status Connection::StartResident(bool rest, const std::string& line, std::string_view what) {
  ssh_session s = session_->s;
  ssh_channel ch = ssh_channel_new(s);
  if (ch == nullptr) {
    broken_ = true;
    return UnavailableError(
        fmt::format("{}: cannot open a channel: {}", target_.name, ssh_get_error(s)));
  }
  (rest ? session_->rest : session_->agent) = ch;  // closed with the session
  if (OpenSessionChannel(s, ch) != SSH_OK) {
    broken_ = true;
    return UnavailableError(
        fmt::format("{}: cannot open a session channel: {}", target_.name, ssh_get_error(s)));
  }
  if (ssh_channel_request_exec(ch, line.c_str()) != SSH_OK) {
    broken_ = true;
    return UnavailableError(
        fmt::format("{}: cannot start {}: {}", target_.name, what, ssh_get_error(s)));
  }
  return OkStatus();
}

Status Connection::StartRest() {
  rest_buffer_.clear();
  rest_stderr_.clear();
  // As the user, on this channel's stdin and stdout: rest_auth/local takes
  // the peer's UID, which is the user's own. Debian installs it in /usr/sbin,
  // outside a user's PATH.
  return StartResident(
      true, "PATH=\"$PATH:/usr/sbin:/usr/local/sbin\" exec slurmrestd -a rest_auth/local",
      "slurmrestd");
}

Result<HttpAnswer> Connection::RestExec(const std::string& request, Clock::time_point deadline,
                                        bool* sent) {
  *sent = false;
  last_used_ = Clock::now();
  bool fresh = false;
  if (session_->rest == nullptr) {
    SKY_RETURN_IF_ERROR(StartRest());
    fresh = true;
  } else {
    SKY_RETURN_IF_ERROR(CheckPooledChannel(session_->rest));
  }
  ssh_channel ch = session_->rest;
  bool written = false;
  if (Status w = WriteAll(ch, request, "the request", &written); !w.ok()) {
    *sent = written && !fresh;
    return w;
  }
  // A slurmrestd that could not start (none installed, a wrong slurm.conf)
  // never read the request: the caller may fall back without running it twice.
  *sent = !fresh;
  ++commands_run_;
  while (true) {
    SKY_ASSIGN_OR_RETURN(std::optional<HttpAnswer> answer, TakeHttpAnswer(rest_buffer_));
    if (answer) {
      *sent = true;
      rest_stderr_.clear();  // slurmrestd logs a line or two per request
      last_used_ = Clock::now();
      if (answer->close) {
        // It ends after an error answer: the next request starts a new one.
        ssh_channel_close(ch);
        ssh_channel_free(ch);
        session_->rest = nullptr;
        rest_buffer_.clear();
      }
      return std::move(*answer);
    }
    Status more = ReadMore(ch, rest_buffer_, rest_stderr_, deadline, "slurmrestd");
    if (!more.ok()) {
      // slurmrestd logs each request it routes ("operations_router: ... POST").
      const bool read_it = rest_stderr_.find("operations_router") != std::string::npos;
      if (fresh && rest_buffer_.empty() && !read_it && more.code() == StatusCode::kUnavailable) {
        // It ended before reading its very first request: it cannot run there.
        rest_unavailable_ = true;
        broken_ = false;
        ssh_channel_close(ch);
        ssh_channel_free(ch);
        session_->rest = nullptr;
        return more;
      }
      *sent = true;
      return more;
    }
  }
}

Status Connection::StartAgent(Clock::time_point deadline) {
  SKY_RETURN_IF_ERROR(StartResident(false, "bash -c " + ShellQuote(AgentScript()), "the agent"));
  ssh_channel ch = session_->agent;
  Status ready = FillAgentBuffer(kAgentReady.size(), deadline);
  if (ready.ok() && agent_buffer_.compare(0, kAgentReady.size(), kAgentReady) != 0) {
    ready = UnavailableError(
        fmt::format("{}: the agent said '{}'", target_.name, agent_buffer_.substr(0, 200)));
  }
  if (!ready.ok()) {
    // No bash there (or it failed at once): commands go on channels of their own.
    if (ready.code() != StatusCode::kDeadlineExceeded) agent_unavailable_ = true;
    ssh_channel_close(ch);
    ssh_channel_free(ch);
    session_->agent = nullptr;
    agent_buffer_.clear();
    broken_ = ready.code() == StatusCode::kDeadlineExceeded;
    return ready;
  }
  agent_buffer_.erase(0, kAgentReady.size());
  return OkStatus();
}

Result<CommandOutput> Connection::AgentExec(const std::string& agent_line,
                                            const std::optional<std::string>& stdin_data,
                                            Clock::time_point deadline, std::size_t max_output,
                                            bool* sent) {
  *sent = false;
  const auto started = Clock::now();
  last_used_ = started;
  if (session_->agent == nullptr) {
    SKY_RETURN_IF_ERROR(StartAgent(deadline));
  } else {
    SKY_RETURN_IF_ERROR(CheckPooledChannel(session_->agent));
  }
  const std::uint64_t id = ++agent_requests_;
  const std::string request = AgentRequest(id, agent_line, stdin_data.value_or(""));
  SKY_RETURN_IF_ERROR(WriteAll(session_->agent, request, "the command", sent));
  ++commands_run_;
  std::size_t eol;
  while ((eol = agent_buffer_.find('\n')) == std::string::npos) {
    if (agent_buffer_.size() > kMaxAgentHeader) {
      broken_ = true;
      return InternalError(fmt::format("{}: the agent answered '{}...', no header", target_.name,
                                       agent_buffer_.substr(0, 80)));
    }
    SKY_RETURN_IF_ERROR(FillAgentBuffer(agent_buffer_.size() + 1, deadline));
  }
  auto header = ParseAgentAnswerHeader(std::string_view(agent_buffer_).substr(0, eol));
  if (!header.ok() || header->id != id) {
    broken_ = true;
    return header.ok() ? InternalError(fmt::format("{}: the agent answered request {} for {}",
                                                   target_.name, header->id, id))
                       : header.status().WithContext(target_.name);
  }
  agent_buffer_.erase(0, eol + 1);
  SKY_RETURN_IF_ERROR(FillAgentBuffer(header->out_bytes + header->err_bytes, deadline));
  CommandOutput out;
  // The shell's $? holds 128+N for a command killed by signal N.
  if (header->status > 128 && header->status < 128 + 65) {
    out.term_signal = header->status - 128;
  } else {
    out.exit_code = header->status;
  }
  out.out = agent_buffer_.substr(0, std::min(header->out_bytes, max_output));
  out.err = agent_buffer_.substr(header->out_bytes, std::min(header->err_bytes, max_output));
  out.truncated = header->out_bytes > max_output || header->err_bytes > max_output;
  agent_buffer_.erase(0, header->out_bytes + header->err_bytes);
  out.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
  last_used_ = Clock::now();
  return out;
}

}  // namespace skyslurm::ssh
