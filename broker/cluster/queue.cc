#include "broker/cluster/queue.h"

#include <fmt/format.h>
#include <json/json.h>

#include <charconv>
#include <memory>

namespace skyslurm::cluster {
namespace {

std::int64_t ToInt(std::string_view s) {
  std::int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

}  // namespace

std::int64_t QueuedJob::TotalGpus() const {
  return gpus_per_job > 0 ? gpus_per_job : gpus_per_node * std::max<std::int64_t>(nodes, 1);
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
      count = ToInt(item.substr(sep + 1));
    } else if (!item.empty() && std::isdigit(static_cast<unsigned char>(item[0]))) {
      count = ToInt(item);
    } else if (!item.empty()) {
      type = std::string(item);
    }
    return std::make_pair(type, count);
  }
  return std::nullopt;
}

Result<std::vector<QueuedJob>> ParseSqueueJson(std::string_view json) {
  Json::CharReaderBuilder builder;
  std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
  Json::Value root;
  std::string errors;
  if (!reader->parse(json.data(), json.data() + json.size(), &root, &errors)) {
    return InvalidArgumentError(fmt::format("squeue --json printed something that is not JSON: {}",
                                            errors));
  }
  if (!root.isObject() || !root["jobs"].isArray()) {
    return InvalidArgumentError("squeue --json: no 'jobs' list in its output");
  }
  std::vector<QueuedJob> jobs;
  for (const Json::Value& j : root["jobs"]) {
    const std::string label = j["job_id"].isIntegral() ? std::to_string(j["job_id"].asInt64()) : "?";
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
    q.partition = j["partition"].asString();
    q.nodes = j["node_count"].asInt64();
    q.start_time = static_cast<std::time_t>(j["start_time"].asInt64());
    q.end_time = static_cast<std::time_t>(j["end_time"].asInt64());
    if (j["submit_time"].isIntegral()) q.submit_time = static_cast<std::time_t>(j["submit_time"].asInt64());
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

}  // namespace skyslurm::cluster
