#include "shim/front/daemon_handoff.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "broker/config/run_dir.h"
#include "broker/job/argv_parser.h"
#include "broker/job/client_command.h"
#include "broker/job/global_id.h"
#include "broker/job/sky_id.h"
#include "broker/util/json_cursor.h"
#include "broker/util/json_string.h"
#include "shim/front/stop_signals_held.h"

extern char** environ;

namespace skyslurm::shim {
namespace {

using job::Opt;

std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
}

long long NowNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// The whole file, or nullopt when it cannot be read as a regular file.
std::optional<std::string> ReadFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return std::nullopt;
  }
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  close(fd);
  if (n < 0) return std::nullopt;
  return text;
}

// The environment as a JSON object, appended.
void AppendEnvironment(std::string& b) {
  b.append("{");
  bool first = true;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = entry.substr(0, eq);
    // skyslurm's own hand-over marks stay here (the route drops them too).
    if (name == "SKYSLURM_PLUGIN_REEXEC" || name == "SKYSLURM_TRACE_START") continue;
    b.append(first ? "" : ",")
        .append(JsonQuote(name))
        .append(":")
        .append(JsonQuote(entry.substr(eq + 1)));
    first = false;
  }
  b.append("}");
}

// The JSON request: the job as typed (job_input.h's form) and the sky id.
// Built with append() only: GCC 12 at -O3 reports a false -Wrestrict inside
// `"literal" + std::string` (GCC bug 105651).
std::string RequestBody(const std::string& sky_id, const std::vector<std::string>& args,
                        const std::optional<std::string>& script, const std::string& cwd,
                        bool traced, long long started_ns) {
  std::string b = "{\"sky_id\":";
  b.append(JsonQuote(sky_id)).append(",\"direct\":true,\"managed\":false");
  if (traced) b.append(",\"trace\":true,\"trace_origin_ns\":").append(std::to_string(started_ns));
  b.append(",\"input\":{\"tool\":\"sbatch\",\"args\":[");
  for (std::size_t i = 0; i < args.size(); ++i)
    b.append(i == 0 ? "" : ",").append(JsonQuote(args[i]));
  b.append("]");
  if (script) b.append(",\"script\":").append(JsonQuote(*script));
  b.append(",\"cwd\":").append(JsonQuote(cwd));
  // Where sbatch's answer goes: a person's terminal, or a program reading it.
  b.append(",\"at_terminal\":").append(isatty(STDOUT_FILENO) == 1 ? "true" : "false");
  b.append(",\"env\":");
  AppendEnvironment(b);
  return b.append("}}");
}

class Socket {
 public:
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  // Connected to the user's own daemon at `path`; false when nobody listens
  // there, or when the folder or the listener is not the user's own
  // (config::PrivateDirProblem, PeerProblem): then nothing is sent, and
  // the slow path (skyslurm __route) says why.
  bool Connect(const std::string& path) {
    sockaddr_un addr{};
    if (path.size() >= sizeof addr.sun_path) return false;
    if (config::PrivateDirProblem(path.substr(0, path.rfind('/')))) return false;
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return false;
    // A full backlog makes connect() wait its turn (blocking socket).
    if (connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) return false;
    return !config::PeerProblem(fd_);
  }
  bool SendAll(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  // Everything until the peer closes, or nullopt after `timeout_ms` of silence.
  std::optional<std::string> ReadToEnd(int timeout_ms) {
    std::string all;
    char buf[65536];
    while (true) {
      pollfd p{fd_, POLLIN, 0};
      const int r = poll(&p, 1, timeout_ms);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return std::nullopt;
      const ssize_t n = read(fd_, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return std::nullopt;
      if (n == 0) return all;
      all.append(buf, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_ = -1;
};

struct HttpAnswer {
  int status = 0;
  std::string body;
};

// "HTTP/1.1 201 Created\r\n...\r\n\r\nbody" (Connection: close: the body
// runs to the end).
std::optional<HttpAnswer> ReadHttpAnswer(const std::string& raw) {
  if (!raw.starts_with("HTTP/1.")) return std::nullopt;
  const auto space = raw.find(' ');
  const auto head_end = raw.find("\r\n\r\n");
  if (space == std::string::npos || head_end == std::string::npos) return std::nullopt;
  HttpAnswer a;
  a.status = std::atoi(raw.c_str() + space + 1);
  a.body = raw.substr(head_end + 4);
  return a;
}

// A POST on the daemon's socket ("Connection: close": the answer runs to
// the end).
std::string HttpPost(std::string_view path, const std::string& body) {
  std::string r = "POST ";
  r.append(path)
      .append(" HTTP/1.1\r\nHost: skyslurmd\r\nContent-Type: application/json\r\n")
      .append("Connection: close\r\nContent-Length: ")
      .append(std::to_string(body.size()))
      .append("\r\n\r\n")
      .append(body);
  return r;
}

// What the daemon wrote for the command to print, printed: its error, or
// its stdout and stderr; the command's exit status.
int PrintAnswer(std::string_view tool, int status, std::map<std::string, std::string>& members) {
  if (status / 100 != 2) {
    const std::string& error = members["error"];
    std::fprintf(stderr, "%.*s: error: skyslurm: %s\n", static_cast<int>(tool.size()), tool.data(),
                 error.empty() ? "skyslurmd gave no answer" : error.c_str());
    return 1;
  }
  // The notes first, as sbatch writes its warnings before its line: a tool
  // that reads both streams as one (Snakemake: the last word of sbatch's
  // output is the job id) finds the id last.
  std::fputs(members["stderr"].c_str(), stderr);
  std::fflush(stderr);
  std::fputs(members["stdout"].c_str(), stdout);
  std::fflush(stdout);
  return std::atoi(members["exit_code"].c_str());
}

// Asks skyslurmd to cancel the sky job; what it printed on stderr.
void CancelInterrupted(const std::string& socket_path, const std::string& sky_id) {
  Socket s;
  if (!s.Connect(socket_path) || !s.SendAll(HttpPost("/v1/jobs/" + sky_id + "/cancel", "{}"))) {
    std::fprintf(stderr,
                 "sbatch: error: skyslurm: interrupted, and skyslurmd could not be asked "
                 "to cancel %s: `skyslurm cancel %s`\n",
                 sky_id.c_str(), sky_id.c_str());
    return;
  }
  auto raw = s.ReadToEnd(120'000);
  auto answer = raw ? ReadHttpAnswer(*raw) : std::nullopt;
  if (answer && answer->status / 100 == 2) {
    std::fprintf(stderr, "sbatch: skyslurm: interrupted: job %s cancelled\n", sky_id.c_str());
  } else {
    std::fprintf(stderr,
                 "sbatch: error: skyslurm: interrupted, and %s may not be cancelled: "
                 "`skyslurm status %s`\n",
                 sky_id.c_str(), sky_id.c_str());
  }
}

}  // namespace

Handoff SubmitToDaemon(Mode mode, int argc, char** argv, long long started_ns) {
  Handoff h;
  if (mode != Mode::kSbatch) return h;
  const std::vector<std::string> args(argv + 1, argv + argc);
  const job::OptionTable table(job::Tool::kSbatch);
  auto parsed = job::ParseArgs(table, args, job::OperandPolicy::kStopAtFirst, "");
  if (!parsed.ok()) return h;
  bool wrap = false;
  for (const auto& o : parsed->options) {
    if (o.spec == nullptr) continue;
    switch (o.spec->id) {
      case Opt::kSkyExplain:
      case Opt::kTestOnly:
      case Opt::kWait:
      case Opt::kHelp:
      case Opt::kUsage:
      case Opt::kVersion:
        return h;  // skyslurm __route's (or the real command's) to answer
      case Opt::kWrap:
        wrap = true;
        break;
      default:
        break;
    }
  }
  std::optional<std::string> script;
  if (!parsed->operands.empty()) {
    script = ReadFile(parsed->operands.front());
    if (!script) return h;  // skyslurm __route says what is wrong with it
  } else if (!wrap) {
    return h;  // a script on stdin: read once, by skyslurm __route
  }
  const std::string home = Env("HOME").value_or("");
  if (home.empty()) return h;
  const std::string socket_path = config::SocketIn(
      config::RunDir(Env("XDG_RUNTIME_DIR"), config::StateDir(Env("XDG_STATE_HOME"), home)));
  const long long connect_start = NowNs();
  Socket s;
  if (!s.Connect(socket_path)) return h;  // no daemon yet: skyslurm __route starts it
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr) return h;
  const char* trace_env = std::getenv("SKYSLURM_TRACE");
  const bool traced =
      trace_env != nullptr && *trace_env != '\0' && std::strcmp(trace_env, "0") != 0;
  const std::string sky_id = NewSkyId(std::time(nullptr));
  const std::string body = RequestBody(sky_id, args, script, cwd, traced, started_ns);
  const std::string request = HttpPost("/v1/jobs", body);
  StopSignalsHeld held;
  // Interrupted while the job's fate is unknown (part of it sent, the
  // connection lost, skyslurmd busy): cancelled if skyslurmd has it, and
  // said either way; the signal then ends us.
  auto interrupted = [&] {
    CancelInterrupted(socket_path, sky_id);
    h.done = true;
    h.exit_code = 128 + SIGINT;
    return h;
  };
  if (!s.SendAll(request)) {
    if (held.Arrived()) return interrupted();
    h.sent_sky_id = sky_id;  // part of it may have gone
    return h;
  }
  // As long as skyslurm __route waits for the daemon's answer.
  auto raw = s.ReadToEnd(120'000);
  const long long answered = NowNs();
  auto answer = raw ? ReadHttpAnswer(*raw) : std::nullopt;
  auto members = answer ? ReadFlatJsonObject(answer->body) : std::nullopt;
  if (!members) {
    if (held.Arrived()) return interrupted();
    h.sent_sky_id = sky_id;
    return h;
  }
  if (members->contains("route")) return h;  // taken by nothing; not for this way
  // Nobody is told this job's id: it does not stay.
  if (held.Arrived() && (answer->status / 100 == 2 || answer->status == 503)) return interrupted();
  if (answer->status == 503) {
    // Busy or between two answers of a cluster: skyslurm __route retries the
    // same job (its answer names the job it has, never a second one).
    h.sent_sky_id = sky_id;
    return h;
  }
  const std::string_view tool = ModeName(mode);
  h.done = true;
  h.exit_code = PrintAnswer(tool, answer->status, *members);
  if (answer->status / 100 != 2) return h;
  if (traced) {
    auto ms = [&](long long ns) { return static_cast<double>(ns) / 1e6; };
    std::fprintf(stderr,
                 "skyslurm: trace (SKYSLURM_TRACE), times from the command's start:\n"
                 "  +%8.1f ms %8.1f ms  shim  start, parse the options, read the script\n"
                 "  +%8.1f ms %8.1f ms  shim  POST /v1/jobs to skyslurmd (the socket, no other "
                 "program)\n"
                 "  = shim: 0 local processes (the shim itself, started by the shell)\n%s",
                 0.0, ms(connect_start - started_ns), ms(connect_start - started_ns),
                 ms(answered - connect_start), (*members)["trace"].c_str());
  }
  return h;
}

namespace {

std::optional<ClientTool> ClientToolOf(Mode mode) {
  switch (mode) {
    case Mode::kSqueue:
      return ClientTool::kSqueue;
    case Mode::kSacct:
      return ClientTool::kSacct;
    case Mode::kScontrol:
      return ClientTool::kScontrol;
    case Mode::kScancel:
      return ClientTool::kScancel;
    default:
      return std::nullopt;
  }
}

}  // namespace

bool InvolvesRoutedJobs(Mode mode, int argc, char** argv) {
  const auto tool = ClientToolOf(mode);
  if (!tool) return false;
  // skyslurmd's own commands (and the real command it falls back to) are the real ones.
  if (std::getenv("SKYSLURM_CLIENT_DIRECT") != nullptr) return false;
  const auto cmd = ParseClientCommand(*tool, std::vector<std::string>(argv + 1, argv + argc));
  // The real command reads these (or says what is wrong).
  if (!cmd || cmd->about) return false;
  // squeue/sacct -M/--clusters (sacct -L) naming no job show routed jobs
  // (below); any other use of other clusters is the real command's.
  if (ClustersAsTyped(*cmd)) return false;
  for (const auto& id : cmd->ids) {
    if (IsGlobalIdWord(id)) return true;
  }
  if (!cmd->ids.empty()) return false;  // only the home's own jobs
  if (*tool != ClientTool::kSqueue && *tool != ClientTool::kSacct) return false;
  const std::string home = Env("HOME").value_or("");
  if (home.empty()) return false;
  struct stat st {};
  return ::stat(config::RoutedMarkerIn(config::StateDir(Env("XDG_STATE_HOME"), home)).c_str(),
                &st) == 0;
}

Handoff RunClientOnDaemon(Mode mode, int argc, char** argv) {
  Handoff h;
  const std::string home = Env("HOME").value_or("");
  if (home.empty()) return h;
  const std::string socket_path = config::SocketIn(
      config::RunDir(Env("XDG_RUNTIME_DIR"), config::StateDir(Env("XDG_STATE_HOME"), home)));
  Socket s;
  if (!s.Connect(socket_path)) return h;  // skyslurm __slurm starts the daemon
  const std::string_view tool = ModeName(mode);
  std::string body = "{\"tool\":";
  body.append(JsonQuote(tool)).append(",\"args\":[");
  for (int i = 1; i < argc; ++i) body.append(i == 1 ? "" : ",").append(JsonQuote(argv[i]));
  body.append("],\"env\":");
  AppendEnvironment(body);
  body.append("}");
  if (!s.SendAll(HttpPost("/v1/slurm", body))) return h;
  auto raw = s.ReadToEnd(120'000);
  auto answer = raw ? ReadHttpAnswer(*raw) : std::nullopt;
  auto members = answer ? ReadFlatJsonObject(answer->body) : std::nullopt;
  h.done = true;
  std::map<std::string, std::string> none;
  h.exit_code = PrintAnswer(tool, members ? answer->status : 502, members ? *members : none);
  return h;
}

}  // namespace skyslurm::shim
