// ParseTrace, ReadTrace and TraceWindow (trace_file.h).
#include "bench/trace/trace_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <sstream>

namespace skyslurm::trace {
namespace {

constexpr std::array<std::string_view, 8> kColumns = {"job_id", "submit_s", "runtime_s", "gpus",
                                                      "nodes",  "gpu_type", "vc",        "status"};

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t from = 0;
  while (true) {
    const std::size_t comma = line.find(',', from);
    out.push_back(line.substr(from, comma == std::string_view::npos ? comma : comma - from));
    if (comma == std::string_view::npos) break;
    from = comma + 1;
  }
  return out;
}

template <typename T>
std::optional<T> Number(std::string_view s) {
  T value{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

}  // namespace

Result<std::vector<TraceJob>> ParseTrace(std::string_view text, std::string_view name) {
  std::vector<TraceJob> jobs;
  int line_number = 0;
  bool header = true;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t eol = text.find('\n', at);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(at, eol - at);
    at = eol + 1;
    ++line_number;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.empty()) continue;
    const auto fields = Fields(line);
    auto bad = [&](std::string_view what) {
      return InvalidArgumentError(fmt::format("{}:{}: {}", name, line_number, what));
    };
    if (fields.size() != kColumns.size()) {
      return bad(
          fmt::format("{} fields, not the {} of job_id,submit_s,runtime_s,gpus,nodes,"
                      "gpu_type,vc,status",
                      fields.size(), kColumns.size()));
    }
    if (header) {
      for (std::size_t i = 0; i < kColumns.size(); ++i) {
        if (fields[i] != kColumns[i]) {
          return bad(fmt::format("column {} is '{}', not '{}'", i + 1, fields[i], kColumns[i]));
        }
      }
      header = false;
      continue;
    }
    TraceJob job;
    job.id = std::string(fields[0]);
    const auto submit = Number<double>(fields[1]);
    if (!submit || *submit < 0) return bad(fmt::format("submit_s '{}' is not a time", fields[1]));
    job.submit_s = *submit;
    if (!fields[2].empty()) {
      const auto runtime = Number<double>(fields[2]);
      if (!runtime || *runtime < 0) {
        return bad(fmt::format("runtime_s '{}' is not a duration", fields[2]));
      }
      job.runtime_s = *runtime;
    }
    const auto gpus = fields[3].empty() ? std::optional<int>(0) : Number<int>(fields[3]);
    if (!gpus || *gpus < 0) return bad(fmt::format("gpus '{}' is not a count", fields[3]));
    job.gpus = *gpus;
    if (!fields[4].empty()) {
      const auto nodes = Number<int>(fields[4]);
      if (!nodes || *nodes < 1) return bad(fmt::format("nodes '{}' is not a count", fields[4]));
      job.nodes = *nodes;
    }
    job.gpu_type = std::string(fields[5]);
    job.vc = std::string(fields[6]);
    job.status = std::string(fields[7]);
    jobs.push_back(std::move(job));
  }
  if (header) return InvalidArgumentError(fmt::format("{}: no header line", name));
  return jobs;
}

Result<std::vector<TraceJob>> ReadTrace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(fmt::format("cannot read the trace {}", path));
  std::ostringstream text;
  text << in.rdbuf();
  return ParseTrace(text.str(), path);
}

std::vector<TraceJob> TraceWindow(const std::vector<TraceJob>& jobs, double start_h, double hours) {
  const double from = start_h * 3600, to = (start_h + hours) * 3600;
  std::vector<TraceJob> out;
  for (const TraceJob& j : jobs) {
    if (j.submit_s < from || j.submit_s >= to) continue;
    out.push_back(j);
    out.back().submit_s -= from;
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
  return out;
}

}  // namespace skyslurm::trace
