#include "broker/translate/partitions.h"

#include <fmt/format.h>

#include <algorithm>

#include "broker/job/values.h"

namespace skyslurm::translate {
namespace {

std::string Minutes(std::optional<std::int64_t> m) {
  return job::FormatTimeLimit(job::TimeLimit{m});
}

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

std::vector<PartitionFit> FitPartitions(const cluster::Description& target, const Needs& needs) {
  std::vector<PartitionFit> fits;
  const bool wants_gpus = needs.gpus_per_node > 0 || needs.gpus_total > 0;
  for (const auto& p : target.partitions) {
    PartitionFit fit;
    fit.partition = &p;
    auto fail = [&](std::string why) {
      fit.problem = std::move(why);
      fits.push_back(fit);
    };
    if (p.state != "UP") {
      fail(fmt::format("partition is {}", p.state));
      continue;
    }
    if (p.max_time_minutes) {
      if (needs.time_unlimited) {
        fail(fmt::format("no time limit asked, and MaxTime is {}", Minutes(p.max_time_minutes)));
        continue;
      }
      if (needs.time_minutes && *needs.time_minutes > *p.max_time_minutes) {
        fail(fmt::format("time limit {} exceeds MaxTime {}", Minutes(needs.time_minutes),
                         Minutes(p.max_time_minutes)));
        continue;
      }
    }
    if (needs.account) {
      if ((!p.allow_accounts.empty() && !Contains(p.allow_accounts, *needs.account)) ||
          Contains(p.deny_accounts, *needs.account)) {
        fail(fmt::format("account {} is not allowed here", *needs.account));
        continue;
      }
    }
    if (needs.qos) {
      if ((!p.allow_qos.empty() && !Contains(p.allow_qos, *needs.qos)) ||
          Contains(p.deny_qos, *needs.qos)) {
        fail(fmt::format("QoS {} is not allowed here", *needs.qos));
        continue;
      }
    }
    // Nodes that can take one share of the job, and what stops the others
    // (by node shape: a partition has few).
    std::int64_t eligible = 0, eligible_gpus = 0;
    std::string node_problem;
    std::int64_t most_gpus = 0, most_cpus = 0, most_memory = 0;
    const std::int64_t gpus_needed = std::max<std::int64_t>(needs.gpus_per_node, wants_gpus ? 1 : 0);
    for (const cluster::NodeShape& shape : target.ShapesOf(p)) {
      std::int64_t gpus = 0;
      for (const auto& g : shape.gres) {
        if (g.name == "gpu" && (!needs.gpu_type || g.type == *needs.gpu_type)) gpus += g.count;
      }
      most_gpus = std::max(most_gpus, gpus);
      most_cpus = std::max(most_cpus, shape.cpus);
      most_memory = std::max(most_memory, shape.memory_mb);
      bool ok = gpus >= gpus_needed && shape.cpus >= needs.cpus_per_node &&
                shape.memory_mb >= needs.memory_per_node_mb;
      for (const auto& f : needs.features) {
        ok = ok && std::binary_search(shape.features.begin(), shape.features.end(), f);
      }
      if (ok) {
        eligible += shape.count;
        eligible_gpus += gpus * shape.count;
      }
    }
    fit.eligible_nodes = eligible;
    if (eligible < needs.nodes) {
      const std::string gpu_name = needs.gpu_type ? *needs.gpu_type + " " : "";
      if (wants_gpus && most_gpus < std::max<std::int64_t>(needs.gpus_per_node, 1)) {
        node_problem = most_gpus == 0
                           ? fmt::format("its nodes have no {}GPUs", gpu_name)
                           : fmt::format("needs {} {}GPUs per node; its nodes have at most {}",
                                         needs.gpus_per_node, gpu_name, most_gpus);
      } else if (most_cpus < needs.cpus_per_node) {
        node_problem = fmt::format("needs {} CPUs per node; its nodes have at most {}",
                                   needs.cpus_per_node, most_cpus);
      } else if (most_memory < needs.memory_per_node_mb) {
        node_problem = fmt::format("needs {} MB of memory per node; its nodes have at most {}",
                                   needs.memory_per_node_mb, most_memory);
      } else if (eligible == 0 && !needs.features.empty()) {
        std::string list;
        for (const auto& f : needs.features) list += (list.empty() ? "" : "&") + f;
        node_problem = fmt::format("no node has the features {}", list);
      } else {
        node_problem = fmt::format("needs {} nodes; {} of its nodes fit", needs.nodes, eligible);
      }
      fail(node_problem);
      continue;
    }
    if (p.max_nodes && needs.nodes > *p.max_nodes) {
      fail(fmt::format("needs {} nodes; MaxNodes is {}", needs.nodes, *p.max_nodes));
      continue;
    }
    if (needs.gpus_total > 0 && eligible_gpus < needs.gpus_total) {
      fail(fmt::format("needs {} GPUs in all; its nodes have {}", needs.gpus_total, eligible_gpus));
      continue;
    }
    fits.push_back(fit);
  }
  return fits;
}

}  // namespace skyslurm::translate
