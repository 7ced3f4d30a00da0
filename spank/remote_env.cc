#include "spank/remote_env.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace skyslurm::spank {
namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string TaskIdForUnroutedJob(std::time_t submit_time, const std::string& cluster,
                                 const std::string& job_id) {
  std::tm tm{};
  gmtime_r(&submit_time, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y%m%d-%H%M%S", &tm);
  return "sky-" + std::string(when) + "_" + cluster + "_" + job_id;
}

std::string ClusterInfoJson(const std::string& cluster, const std::string& partition) {
  return "{\"cloud\": \"slurm\", \"cluster\": " + JsonString(cluster) +
         ", \"region\": " + JsonString(cluster) + ", \"zone\": " + JsonString(partition) + "}";
}

long GpusFrom(const char* gpus_on_node, const char* job_gpus) {
  if (gpus_on_node != nullptr && *gpus_on_node != '\0') return std::strtol(gpus_on_node, nullptr, 10);
  if (job_gpus == nullptr || *job_gpus == '\0') return 0;
  long count = 0;
  const char* p = job_gpus;
  while (*p != '\0') {
    char* end = nullptr;
    const long first = std::strtol(p, &end, 10);
    if (end == p) break;
    long last = first;
    if (*end == '-') {
      const char* q = end + 1;
      last = std::strtol(q, &end, 10);
      if (end == q) break;
    }
    count += last >= first ? last - first + 1 : 0;
    p = *end == ',' ? end + 1 : end;
    if (*end != ',' && *end != '\0') break;
  }
  return count;
}

namespace {

// A sky id as skyslurm routes a job with it ("sky-20261204-194459-853421":
// letters, digits and '-', as broker/job/sky_id.h; the plugin links none of
// the broker). An id with the index already ("..._7", a step of the task)
// or one the user chose is not.
bool IsSkyId(const std::string& id) {
  if (id.rfind("sky-", 0) != 0 || id.size() > 64) return false;
  for (char c : id) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '-') return false;
  }
  return true;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> SkypilotEnv(const StepFacts& f,
                                                             bool task_id_known) {
  std::string ips;
  for (const auto& a : f.node_addresses) {
    if (!ips.empty()) ips += '\n';
    ips += a;
  }
  std::vector<std::pair<std::string, std::string>> env = {
      {"SKYPILOT_NODE_IPS", ips},
      {"SKYPILOT_NUM_NODES", std::to_string(f.num_nodes)},
      {"SKYPILOT_NODE_RANK", std::to_string(f.node_rank)},
      {"SKYPILOT_NUM_GPUS_PER_NODE", std::to_string(f.gpus_per_node)},
      {"SKYPILOT_CLUSTER_INFO", ClusterInfoJson(f.cluster, f.partition)},
  };
  if (!task_id_known) {
    env.emplace_back("SKYPILOT_TASK_ID", TaskIdForUnroutedJob(f.submit_time, f.cluster, f.job_id));
  } else if (!f.array_task_id.empty() && IsSkyId(f.task_id)) {
    env.emplace_back("SKYPILOT_TASK_ID", f.task_id + "_" + f.array_task_id);
  }
  return env;
}

}  // namespace skyslurm::spank
