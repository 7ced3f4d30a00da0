#include "broker/backend/slurm/squeue.h"

#include <fmt/format.h>
#include <json/json.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iterator>
#include <memory>

#include "broker/backend/slurm/slurm_state.h"
#include "broker/job/values.h"
#include "broker/util/json_read.h"
#include "broker/util/strings.h"
#include "broker/util/timestamp.h"

namespace skyslurm::backend {
namespace {

using cluster::ArrayTaskCount;
using cluster::QueuedJob;

// The fields of SqueueActiveArgs, in order; the comment, free text, last.
// Fields end with \x1f (unit separator) and records with \x1e (record
// separator), which no job id, state, partition, user or time holds.
constexpr const char* kActiveFields[] = {"JobArrayID", "State",         "Reason",       "Partition",
                                         "UserName",   "tres-per-node", "tres-per-job", "NumNodes",
                                         "SubmitTime", "StartTime",     "EndTime",      "TimeLimit",
                                         "NodeList",   "Name",          "exit_code",    "Comment"};
constexpr std::size_t kActiveFieldCount = std::size(kActiveFields);

std::string Excerpt(std::string_view record) {
  std::string out;
  for (char c : record.substr(0, 200)) {
    out += c == '\x1f' ? '|' : c;
  }
  return out;
}

}  // namespace

namespace {

std::vector<std::string> SqueueArgs(const char* states) {
  std::string format;
  for (std::size_t i = 0; i < kActiveFieldCount; ++i) {
    format += fmt::format("{}{}:0{}", i == 0 ? "" : ",", kActiveFields[i],
                          i + 1 == kActiveFieldCount ? '\x1e' : '\x1f');
  }
  return {"--noheader", fmt::format("--states={}", states), "--Format=" + format};
}

}  // namespace

std::vector<std::string> SqueueActiveArgs() { return SqueueArgs("PENDING,RUNNING"); }

std::vector<std::string> SqueueAllArgs() { return SqueueArgs("all"); }

std::optional<int> ParseSqueueExitCode(std::string_view text) {
  if (text.empty()) return 0;
  auto whole = [](std::string_view t) -> std::optional<int> {
    int v = 0;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size() || v < 0) return std::nullopt;
    return v;
  };
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return whole(text);
  const auto code = whole(text.substr(0, colon));
  const auto signal = whole(text.substr(colon + 1));
  if (!code || !signal || *code > 255 || *signal > 127) return std::nullopt;
  return (*code << 8) | *signal;
}

Result<std::vector<QueuedJob>> ParseSqueueActive(std::string_view text) {
  std::vector<QueuedJob> jobs;
  std::size_t start = 0;
  while (true) {
    // Records end with \x1e and a newline; a comment may hold newlines.
    while (start < text.size() && text[start] == '\n') ++start;
    if (start >= text.size()) break;
    const auto end = text.find('\x1e', start);
    if (end == std::string_view::npos) {
      return InvalidArgumentError(
          fmt::format("squeue: a job's line is cut short: '{}'", Excerpt(text.substr(start))));
    }
    const std::string_view record = text.substr(start, end - start);
    start = end + 1;
    std::vector<std::string_view> f;
    std::size_t from = 0;
    while (f.size() + 1 < kActiveFieldCount) {
      const auto sep = record.find('\x1f', from);
      if (sep == std::string_view::npos) break;
      f.push_back(record.substr(from, sep - from));
      from = sep + 1;
    }
    if (f.size() + 1 != kActiveFieldCount) {
      return InvalidArgumentError(
          fmt::format("squeue: expected {} fields, got '{}'", kActiveFieldCount, Excerpt(record)));
    }
    f.push_back(record.substr(from));  // the comment: anything, separators included
    auto bad = [&](std::size_t i) {
      return InvalidArgumentError(
          fmt::format("squeue: job {}: unreadable {} '{}'", f[0], kActiveFields[i], Excerpt(f[i])));
    };
    QueuedJob q;
    q.job_id = std::string(f[0]);
    if (const auto plus = f[0].find('+'); plus != std::string_view::npos) {
      int offset = 0;
      const auto [o, oec] =
          std::from_chars(f[0].data() + plus + 1, f[0].data() + f[0].size(), offset);
      if (oec != std::errc() || o != f[0].data() + f[0].size() || offset < 0) return bad(0);
      q.het_offset = offset;
      if (offset == 0) q.job_id = std::string(f[0].substr(0, plus));
    }
    if (const auto bracket = f[0].find("_[");
        bracket != std::string_view::npos && f[0].ends_with(']')) {
      q.tasks = ArrayTaskCount(f[0].substr(bracket + 2, f[0].size() - bracket - 3));
    }
    q.state = std::string(f[1]);
    q.phase = SlurmPhaseOf(q.state);
    q.reason = std::string(f[2]);
    q.partition = std::string(f[3]);
    q.user = std::string(f[4]);
    if (auto g = GpusInTres(f[5])) {
      q.gpu_type = g->first;
      q.gpus_per_node = g->second;
    }
    if (auto g = GpusInTres(f[6])) {
      if (q.gpu_type.empty()) q.gpu_type = g->first;
      q.gpus_per_job = g->second;
    }
    std::int64_t nodes = 0;
    const auto [p, ec] = std::from_chars(f[7].data(), f[7].data() + f[7].size(), nodes);
    if (ec != std::errc() || p != f[7].data() + f[7].size() || nodes < 0) return bad(7);
    q.nodes = nodes;
    std::time_t* times[] = {&q.submit_time, &q.start_time, &q.end_time};
    for (std::size_t i = 0; i < 3; ++i) {
      const std::string_view t = f[8 + i];
      if (auto parsed = ParseUtcTimestamp(t)) {
        *times[i] = *parsed;
      } else if (t != "N/A" && t != "Unknown" && t != "None") {
        return bad(8 + i);
      }
    }
    if (f[11] != "UNLIMITED" && f[11] != "NOT_SET" && f[11] != "INVALID") {
      auto limit = job::ParseTimeLimit(f[11]);
      if (!limit.ok()) return bad(11);
      q.time_limit_minutes = limit->minutes.value_or(0);
    }
    q.nodelist = std::string(f[12]);
    q.name = std::string(f[13]);
    // The wait status as Slurm keeps it (exit code above 8 bits, signal
    // below): 22.05 prints it whole; 23.02 on print "exit:signal", and
    // nothing for a job with none yet.
    auto exit_code = ParseSqueueExitCode(f[14]);
    if (!exit_code) return bad(14);
    q.exit_code = *exit_code;
    if (f[15] != "(null)") q.comment = std::string(f[15]);
    jobs.push_back(std::move(q));
  }
  return jobs;
}

std::optional<std::pair<std::string, std::int64_t>> GpusInTres(std::string_view tres) {
  // Comma-separated items; a GPU item is gres:gpu[:type]:count,
  // gres/gpu[:type]=count or gpu[:type]:count.
  std::size_t start = 0;
  while (start < tres.size()) {
    auto end = tres.find(',', start);
    if (end == std::string_view::npos) end = tres.size();
    std::string_view item = tres.substr(start, end - start);
    start = end + 1;
    for (std::string_view prefix : {"gres:", "gres/"}) {
      if (item.starts_with(prefix)) item.remove_prefix(prefix.size());
    }
    if (!item.starts_with("gpu")) continue;
    item.remove_prefix(3);
    std::string type;
    std::int64_t count = 1;
    if (item.starts_with(':') || item.starts_with('=')) item.remove_prefix(1);
    // item is now "[type:]count", "[type=]count", "type:count" or "count".
    const auto sep = item.find_last_of(":=");
    if (sep != std::string_view::npos) {
      type = std::string(item.substr(0, sep));
      count = LeadingInt(item.substr(sep + 1));
    } else if (!item.empty() && std::isdigit(static_cast<unsigned char>(item[0]))) {
      count = LeadingInt(item);
    } else if (!item.empty()) {
      type = std::string(item);
    }
    return std::make_pair(type, count);
  }
  return std::nullopt;
}

Result<std::vector<QueuedJob>> ParseSqueueJson(std::string_view json) {
  Json::Value root;
  std::string errors;
  if (!ReadJson(json, &root, &errors)) {
    return InvalidArgumentError(
        fmt::format("squeue --json printed something that is not JSON: {}", errors));
  }
  if (!root.isObject() || !root["jobs"].isArray()) {
    return InvalidArgumentError("squeue --json: no 'jobs' list in its output");
  }
  std::vector<QueuedJob> jobs;
  for (const Json::Value& j : root["jobs"]) {
    const std::string label =
        j["job_id"].isIntegral() ? std::to_string(j["job_id"].asInt64()) : "?";
    auto need = [&](const char* field, bool ok) -> Status {
      if (ok) return OkStatus();
      return InvalidArgumentError(fmt::format(
          "squeue --json: job {}: field '{}' is missing or has the wrong type", label, field));
    };
    SKY_RETURN_IF_ERROR(need("job_id", j["job_id"].isIntegral()));
    SKY_RETURN_IF_ERROR(need("job_state", j["job_state"].isString()));
    SKY_RETURN_IF_ERROR(need("partition", j["partition"].isString()));
    SKY_RETURN_IF_ERROR(need("node_count", j["node_count"].isIntegral()));
    SKY_RETURN_IF_ERROR(need("start_time", j["start_time"].isIntegral()));
    SKY_RETURN_IF_ERROR(need("end_time", j["end_time"].isIntegral()));
    QueuedJob q;
    q.job_id = label;
    q.state = j["job_state"].asString();
    q.phase = SlurmPhaseOf(q.state);
    q.partition = j["partition"].asString();
    q.nodes = j["node_count"].asInt64();
    q.start_time = static_cast<std::time_t>(j["start_time"].asInt64());
    q.end_time = static_cast<std::time_t>(j["end_time"].asInt64());
    if (j["submit_time"].isIntegral())
      q.submit_time = static_cast<std::time_t>(j["submit_time"].asInt64());
    if (j["time_limit"].isIntegral()) q.time_limit_minutes = j["time_limit"].asInt64();
    if (j["state_reason"].isString()) q.reason = j["state_reason"].asString();
    if (j["name"].isString()) q.name = j["name"].asString();
    if (j["user_name"].isString()) q.user = j["user_name"].asString();
    if (j["comment"].isString()) q.comment = j["comment"].asString();
    if (j["nodes"].isString()) q.nodelist = j["nodes"].asString();
    if (j["exit_code"].isIntegral()) q.exit_code = j["exit_code"].asInt();
    if (j["tres_per_node"].isString()) {
      if (auto g = GpusInTres(j["tres_per_node"].asString())) {
        q.gpu_type = g->first;
        q.gpus_per_node = g->second;
      }
    }
    if (j["tres_per_job"].isString()) {
      if (auto g = GpusInTres(j["tres_per_job"].asString())) {
        if (q.gpu_type.empty()) q.gpu_type = g->first;
        q.gpus_per_job = g->second;
      }
    }
    jobs.push_back(std::move(q));
  }
  return jobs;
}

}  // namespace skyslurm::backend
