#include "broker/util/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace skyslurm::trace {
namespace {

using Clock = std::chrono::steady_clock;

thread_local std::shared_ptr<Trace> t_current;
thread_local int t_thread = 0;  // which of the request's threads this is

std::int64_t Micros(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

std::string Plural(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

Trace::Trace(std::string where) : Trace(std::move(where), Clock::now()) {}
Trace::Trace(std::string where, Clock::time_point origin)
    : where_(std::move(where)), origin_(origin) {}

void Trace::Add(SpanRecord span) {
  std::lock_guard lock(mu_);
  spans_.push_back(std::move(span));
}

std::vector<SpanRecord> Trace::spans() const {
  std::lock_guard lock(mu_);
  return spans_;
}

std::string Trace::Counts() const {
  int local = 0, remote = 0, agent = 0, rest = 0, writes = 0, parses = 0;
  for (const auto& s : spans()) {
    switch (s.cost) {
      case Cost::kLocalProcess:
        ++local;
        break;
      case Cost::kRemoteCommand:
        ++remote;
        break;
      case Cost::kAgentCommand:
        ++agent;
        break;
      case Cost::kRestCall:
        ++rest;
        break;
      case Cost::kStoreWrite:
        ++writes;
        break;
      case Cost::kParse:
        ++parses;
        break;
      case Cost::kNone:
        break;
    }
  }
  // A command on a new channel costs sshd's session process, the user's
  // shell and the program; through an agent, the program only.
  return fmt::format(
      "{}: {}, {} ({} processes there), {}, {}, {}{}", where_,
      Plural(local, "local process", "local processes"),
      Plural(remote, "remote command on a new channel", "remote commands on new channels"),
      remote * 3, Plural(agent, "command through an agent", "commands through agents"),
      Plural(rest, "slurmrestd request", "slurmrestd requests"),
      Plural(writes, "state write", "state writes"),
      parses == 0 ? std::string() : ", " + Plural(parses, "parse of a job", "parses of a job"));
}

std::string Trace::Render() const {
  auto all = spans();
  std::stable_sort(all.begin(), all.end(), [](const SpanRecord& a, const SpanRecord& b) {
    return a.start_us < b.start_us;
  });
  std::string out;
  for (const auto& s : all) {
    out += fmt::format("  +{:8.1f} ms {:8.1f} ms  {}{}  {}\n",
                       static_cast<double>(s.start_us) / 1000.0,
                       static_cast<double>(s.took_us) / 1000.0, where_,
                       s.thread == 0 ? std::string() : fmt::format("[{}]", s.thread), s.name);
  }
  out += "  = " + Counts() + "\n";
  return out;
}

std::shared_ptr<Trace> Current() { return t_current; }

Install::Install(std::shared_ptr<Trace> trace, bool adopted)
    : previous_(std::move(t_current)), previous_thread_(t_thread) {
  t_thread = adopted && trace != nullptr ? trace->NextThread() : 0;
  t_current = std::move(trace);
}

Install::~Install() {
  t_current = std::move(previous_);
  t_thread = previous_thread_;
}

Span::Span(std::string name, Cost cost)
    : trace_(t_current), name_(std::move(name)), cost_(cost), start_(Clock::now()) {}

Span::~Span() {
  if (trace_ == nullptr) return;
  const auto end = Clock::now();
  trace_->Add(
      {std::move(name_), Micros(start_ - trace_->origin()), Micros(end - start_), cost_, t_thread});
}

bool Wanted() {
  const char* v = std::getenv("SKYSLURM_TRACE");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

}  // namespace skyslurm::trace
