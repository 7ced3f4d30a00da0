#include "spank/remote_env.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>

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

std::string TaskIdForUnroutedJob(const std::string& cluster, const std::string& job_id) {
  return "sky-" + cluster + "_" + job_id;
}

std::vector<std::string> AddressesFor(const std::vector<std::string>& names,
                                      const std::string& map) {
  std::map<std::string_view, std::string_view> known;
  for (std::size_t start = 0; start < map.size();) {
    std::size_t end = map.find(';', start);
    if (end == std::string::npos) end = map.size();
    const std::string_view entry(map.data() + start, end - start);
    if (const auto eq = entry.find('='); eq != std::string_view::npos && eq > 0) {
      known.emplace(entry.substr(0, eq), entry.substr(eq + 1));
    }
    start = end + 1;
  }
  std::vector<std::string> addresses;
  for (const std::string& name : names) {
    const auto it = known.find(name);
    addresses.emplace_back(it != known.end() && !it->second.empty() ? it->second : name);
  }
  return addresses;
}

std::string ClusterInfoJson(const std::string& cluster, const std::string& partition) {
  return "{\"cloud\": \"slurm\", \"cluster\": " + JsonString(cluster) +
         ", \"region\": " + JsonString(cluster) + ", \"zone\": " + JsonString(partition) + "}";
}

long GpusFrom(const char* gpus_on_node, const char* job_gpus) {
  if (gpus_on_node != nullptr && *gpus_on_node != '\0')
    return std::strtol(gpus_on_node, nullptr, 10);
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
    env.emplace_back("SKYPILOT_TASK_ID", TaskIdForUnroutedJob(f.cluster, f.job_id));
  } else if (!f.array_task_id.empty() && IsSkyId(f.task_id)) {
    env.emplace_back("SKYPILOT_TASK_ID", f.task_id + "_" + f.array_task_id);
  }
  return env;
}

}  // namespace skyslurm::spank
