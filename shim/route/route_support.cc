#include "shim/route/route_support.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "shim/front/real_command.h"

namespace skyslurm::route {
namespace {

// The command's printer while RunRoute runs (null otherwise).
TracePrinter* g_trace = nullptr;

}  // namespace

TracePrinter* CurrentTrace() { return g_trace; }

TracePrinter::TracePrinter() {
  g_trace = this;
  if (!trace::Wanted()) return;
  // The shim's start, when it handed the invocation over (same clock).
  const char* start = std::getenv("SKYSLURM_TRACE_START");
  const auto now = std::chrono::steady_clock::now();
  auto origin = now;
  if (start != nullptr && std::atoll(start) > 0) {
    origin = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(std::atoll(start)));
  }
  trace_ = std::make_shared<trace::Trace>("skyslurm", origin);
  if (origin != now) {
    trace_->Add({"the shim starts, finds routing asked for, execs skyslurm __route", 0,
                 std::chrono::duration_cast<std::chrono::microseconds>(now - origin).count(),
                 trace::Cost::kLocalProcess});
  }
  unsetenv("SKYSLURM_TRACE_START");
}

TracePrinter::~TracePrinter() {
  g_trace = nullptr;
  if (trace_ == nullptr) return;
  std::fprintf(stderr, "skyslurm: trace (SKYSLURM_TRACE), times from the command's start:\n%s%s",
               trace_->Render().c_str(), daemon_.c_str());
}

Progress::Progress(std::string tool) : tool_(std::move(tool)), tty_(isatty(STDERR_FILENO) != 0) {}

void Progress::Say(const std::string& what) {
  if (!tty_) return;
  std::fprintf(stderr, "\r\033[K%s: skyslurm: %s", tool_.c_str(), what.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void Progress::Clear() {
  if (tty_ && shown_) std::fputs("\r\033[K", stderr);
  shown_ = false;
}

std::string RealCommandPath(const std::string& tool, const config::Settings& settings) {
  const char* path = std::getenv("PATH");
  std::string search = !settings.real_bin_dir.empty() ? settings.real_bin_dir
                                                      : (path != nullptr ? path : "/usr/bin:/bin");
  std::string why;
  auto found = shim::FindRealCommand(tool, search, "", &why);
  return found ? *found : "";
}

void MarkRealCommand() {
  setenv("SKYSLURM_REAL_COMMAND_PID", std::to_string(getpid()).c_str(), 1);
  unsetenv("SKYSLURM_ANY_CLUSTER");
}

void Exec(std::vector<std::string> argv, const std::string& program, bool search) {
  std::vector<char*> c;
  for (auto& a : argv) c.push_back(a.data());
  c.push_back(nullptr);
  if (search) {
    execvp(program.c_str(), c.data());
  } else {
    execv(program.c_str(), c.data());
  }
}

[[noreturn]] void ExecReal(const std::string& real, const std::string& tool, job::Tool jtool,
                           const std::vector<std::string>& args) {
  std::vector<std::string> argv = {tool};
  const std::vector<std::string> kept =
      job::RemoveOptions(job::OptionTable(jtool), args, job::SkyOptionIds());
  argv.insert(argv.end(), kept.begin(), kept.end());
  MarkRealCommand();
  Exec(std::move(argv), real);
  std::fprintf(stderr, "%s: error: skyslurm: cannot run %s: %s\n", tool.c_str(), real.c_str(),
               std::strerror(errno));
  std::exit(1);
}

int Fail(const std::string& tool, const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n", tool.c_str(), message.c_str());
  return 1;
}

std::optional<std::int64_t> TimeLimitMinutes(const job::Request& request) {
  if (!request.time_limit || request.time_limit->infinite()) return std::nullopt;
  return request.time_limit->minutes;
}

int WaitStatusExit(const std::string& state, int wait_status) {
  if (state == "COMPLETED") return 0;
  const int code = (wait_status >> 8) & 0xff, signal = wait_status & 0x7f;
  return signal != 0 ? 128 + signal : (code != 0 ? code : 1);
}

}  // namespace skyslurm::route
