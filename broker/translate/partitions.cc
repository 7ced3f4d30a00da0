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

// "text (--option)", or the text alone when no option asked for it.
std::string Naming(std::string text, const std::string& option) {
  return option.empty() ? text : fmt::format("{} ({})", text, option);
}

// Why no node of the partition can take one share of the job, each need
// judged alone, so that every unmet one is said; and how many nodes meet all.
struct NodeVerdict {
  std::vector<std::string> problems;
  std::int64_t eligible = 0, eligible_gpus = 0, total_nodes = 0, total_gpus = 0;
};

NodeVerdict JudgeNodes(const cluster::Description& target, const cluster::Partition& p,
                       const Needs& needs) {
  NodeVerdict v;
  const bool wants_gpus = needs.gpus_per_node > 0 || needs.gpus_total > 0;
  const std::int64_t gpus_needed = std::max<std::int64_t>(needs.gpus_per_node, wants_gpus ? 1 : 0);
  std::int64_t most_gpus = 0, most_cpus = 0, most_memory = 0;
  bool some_has_features = false;
  for (const cluster::NodeShape& shape : target.ShapesOf(p)) {
    std::int64_t gpus = 0;
    for (const auto& g : shape.gres) {
      if (g.name == "gpu" && (!needs.gpu_type || g.type == *needs.gpu_type)) gpus += g.count;
    }
    bool features = true;
    for (const auto& f : needs.features) {
      features = features && std::binary_search(shape.features.begin(), shape.features.end(), f);
    }
    most_gpus = std::max(most_gpus, gpus);
    most_cpus = std::max(most_cpus, shape.cpus);
    most_memory = std::max(most_memory, shape.memory_mb);
    some_has_features = some_has_features || features;
    v.total_nodes += shape.count;
    v.total_gpus += gpus * shape.count;
    if (gpus >= gpus_needed && shape.cpus >= needs.cpus_per_node &&
        shape.memory_mb >= needs.memory_per_node_mb && features) {
      v.eligible += shape.count;
      v.eligible_gpus += gpus * shape.count;
    }
  }
  const std::string gpu_name = needs.gpu_type ? *needs.gpu_type + " " : "";
  if (wants_gpus && most_gpus < gpus_needed) {
    v.problems.push_back(Naming(
        most_gpus == 0 ? fmt::format("its nodes have no {}GPUs", gpu_name)
                       : fmt::format("needs {} {}GPUs per node but its nodes have at most {}",
                                     needs.gpus_per_node, gpu_name, most_gpus),
        needs.gpus_option));
  }
  if (most_cpus < needs.cpus_per_node) {
    v.problems.push_back(Naming(fmt::format("needs {} CPUs per node but its nodes have at most {}",
                                            needs.cpus_per_node, most_cpus),
                                needs.cpus_option));
  }
  if (most_memory < needs.memory_per_node_mb) {
    v.problems.push_back(
        Naming(fmt::format("needs {} MB of memory per node but its nodes have at most {}",
                           needs.memory_per_node_mb, most_memory),
               needs.memory_option));
  }
  if (!needs.features.empty() && !some_has_features) {
    std::string list;
    for (const auto& f : needs.features) list += (list.empty() ? "" : "&") + f;
    v.problems.push_back(
        Naming(fmt::format("no node has the features {}", list), needs.features_option));
  }
  if (needs.nodes > v.total_nodes) {
    v.problems.push_back(
        Naming(fmt::format("needs {} nodes but it has {}", needs.nodes, v.total_nodes),
               needs.nodes_option));
  } else if (v.problems.empty() && v.eligible < needs.nodes) {
    v.problems.push_back(
        Naming(fmt::format("needs {} nodes but {} of its nodes fit", needs.nodes, v.eligible),
               needs.nodes_option));
  }
  return v;
}

}  // namespace

std::vector<PartitionFit> FitPartitions(const cluster::Description& target, const Needs& needs) {
  std::vector<PartitionFit> fits;
  for (const auto& p : target.partitions) {
    PartitionFit fit;
    fit.partition = &p;
    std::vector<std::string>& problems = fit.problems;
    if (p.state != "UP") problems.push_back(fmt::format("partition is {}", p.state));
    if (p.max_time_minutes) {
      if (needs.time_unlimited) {
        problems.push_back(Naming(
            fmt::format("no time limit asked, and MaxTime is {}", Minutes(p.max_time_minutes)),
            needs.time_option));
      } else if (needs.time_minutes && *needs.time_minutes > *p.max_time_minutes) {
        problems.push_back(
            Naming(fmt::format("time limit {} exceeds MaxTime {}", Minutes(needs.time_minutes),
                               Minutes(p.max_time_minutes)),
                   needs.time_option));
      }
    }
    if (needs.account &&
        ((!p.allow_accounts.empty() && !Contains(p.allow_accounts, *needs.account)) ||
         Contains(p.deny_accounts, *needs.account))) {
      problems.push_back(fmt::format("account {} is not allowed here (--account)", *needs.account));
    }
    if (needs.qos && ((!p.allow_qos.empty() && !Contains(p.allow_qos, *needs.qos)) ||
                      Contains(p.deny_qos, *needs.qos))) {
      problems.push_back(fmt::format("QoS {} is not allowed here (--qos)", *needs.qos));
    }
    NodeVerdict nodes = JudgeNodes(target, p, needs);
    fit.eligible_nodes = nodes.eligible;
    problems.insert(problems.end(), nodes.problems.begin(), nodes.problems.end());
    if (p.max_nodes && needs.nodes > *p.max_nodes) {
      problems.push_back(
          Naming(fmt::format("needs {} nodes but MaxNodes is {}", needs.nodes, *p.max_nodes),
                 needs.nodes_option));
    }
    if (needs.gpus_total > 0 && nodes.problems.empty() && nodes.eligible_gpus < needs.gpus_total) {
      problems.push_back(Naming(fmt::format("needs {} GPUs in all but its nodes have {}",
                                            needs.gpus_total, nodes.eligible_gpus),
                                needs.gpus_option));
    }
    for (const auto& problem : problems) {
      fit.problem += (fit.problem.empty() ? "" : ", ") + problem;
    }
    fits.push_back(std::move(fit));
  }
  return fits;
}

}  // namespace skyslurm::translate
