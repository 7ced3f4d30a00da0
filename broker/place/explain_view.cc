#include "broker/place/explain_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>

#include "broker/place/audit.h"
#include "broker/place/job_folder.h"
#include "broker/translate/translation.h"
#include "broker/util/line_diff.h"

namespace skyslurm::place {
namespace {

std::string Origin(const job::Request& r, job::Opt id) {
  const job::Setting* s = r.Effective(id);
  return s == nullptr ? "" : s->origin.Describe(r.script_name);
}

void Row(std::string& out, std::string_view what, const std::string& value,
         const std::string& where) {
  out += fmt::format("  {:<14} {:<34} {}\n", what, value, where);
}

// The rows of what one component (or the whole job) asks for: its size,
// memory, time, GPUs, partition, constraint, account and QoS.
void ResourceRows(std::string& out, const job::Request& r, const job::Request& script,
                  const catalog::AcceleratorCatalog& catalog) {
  using job::Opt;
  auto origin = [&](Opt id) {
    const job::Setting* s = r.Effective(id);
    return s == nullptr ? "" : s->origin.Describe(script.script_name);
  };
  if (r.nodes) {
    Row(out, "nodes",
        r.nodes->min == r.nodes->max ? std::to_string(r.nodes->min)
                                     : fmt::format("{}-{}", r.nodes->min, r.nodes->max),
        origin(Opt::kNodes));
  }
  if (r.ntasks) Row(out, "tasks", std::to_string(*r.ntasks), origin(Opt::kNtasks));
  if (r.ntasks_per_node) {
    Row(out, "tasks per node", std::to_string(*r.ntasks_per_node), origin(Opt::kNtasksPerNode));
  }
  if (r.cpus_per_task) {
    Row(out, "cpus per task", std::to_string(*r.cpus_per_task), origin(Opt::kCpusPerTask));
  }
  if (r.mem_mb) {
    // --mem=0 (or --mem-per-cpu=0) is no amount: all of each node's memory.
    Row(out, "memory",
        *r.mem_mb == 0 ? std::string("all of each node's memory (0)")
                       : fmt::format("{} MB per node", *r.mem_mb),
        origin(r.Effective(Opt::kMem) != nullptr ? Opt::kMem : Opt::kMemPerCpu));
  }
  if (r.mem_per_cpu_mb) {
    Row(out, "memory", fmt::format("{} MB per CPU", *r.mem_per_cpu_mb), origin(Opt::kMemPerCpu));
  }
  if (r.mem_per_gpu_mb) {
    Row(out, "memory", fmt::format("{} MB per GPU", *r.mem_per_gpu_mb), origin(Opt::kMemPerGpu));
  }
  if (r.time_limit) {
    Row(out, "time limit", job::FormatTimeLimit(*r.time_limit), origin(Opt::kTime));
  }
  for (const auto& g : r.gpus) {
    std::string what = g.type.empty()
                           ? fmt::format("{} GPU(s) {}", g.count, job::ScopeName(g.scope))
                           : fmt::format("{} x {} {}", g.count, g.type, job::ScopeName(g.scope));
    if (!g.type.empty()) {
      if (auto c = catalog.Canonical(g.type); c && *c != g.type) what += fmt::format(" ({})", *c);
    }
    Row(out, "GPUs", what, g.origin.Describe(script.script_name));
  }
  if (!r.partitions.empty()) {
    std::string list;
    for (const auto& p : r.partitions) list += (list.empty() ? "" : ",") + p;
    Row(out, "partition", list, origin(Opt::kPartition));
  }
  auto optional_row = [&](std::string_view what, const std::optional<std::string>& v, Opt id) {
    if (v) Row(out, what, *v, origin(id));
  };
  optional_row("constraint", r.constraint, Opt::kConstraint);
  optional_row("account", r.account, Opt::kAccount);
  optional_row("QoS", r.qos, Opt::kQos);
}

std::string RequestSummary(const job::Request& r, const catalog::AcceleratorCatalog& catalog) {
  using job::Opt;
  std::string out =
      fmt::format("Request ({}, as {} reads it)\n", r.script_name, job::ToolName(r.tool));
  if (r.hetjob) {
    out += fmt::format("  a heterogeneous job of {} components, which start together\n",
                       r.ComponentCount());
    out += "  component 0 (runs the script)\n";
  }
  for (std::size_t k = 0; k < r.ComponentCount(); ++k) {
    if (k > 0) out += fmt::format("  component {}\n", k);
    std::string rows;
    ResourceRows(rows, r.Component(k), r, catalog);
    // A component's rows sit under its heading.
    for (std::size_t at = 0; r.hetjob && at < rows.size();) {
      rows.insert(at, "  ");
      const std::size_t end = rows.find('\n', at);
      if (end == std::string::npos) break;
      at = end + 1;
    }
    out += rows;
  }
  auto optional_row = [&](std::string_view what, const std::optional<std::string>& v, Opt id) {
    if (v) Row(out, what, *v, Origin(r, id));
  };
  optional_row("job name", r.job_name, Opt::kJobName);
  optional_row("array", r.array, Opt::kArray);
  optional_row("dependency", r.dependency, Opt::kDependency);
  optional_row("output", r.output, Opt::kOutput);
  optional_row("error", r.error, Opt::kError);
  optional_row("chdir", r.chdir, Opt::kChdir);
  optional_row("container", r.container, Opt::kContainer);
  for (const auto& name : r.other_container_options) {
    const job::Setting* s = r.EffectiveByName(name);
    Row(out, "container", fmt::format("--{}={}", name, s->occurrence.value.value_or("")),
        s->origin.Describe(r.script_name));
  }
  for (const auto& m : r.modules) {
    Row(out, "module", fmt::format("{} ({})", m.word, m.verb),
        fmt::format("{}:{}", r.script_name, m.line));
  }
  if (r.wait) Row(out, "wait", "yes", Origin(r, Opt::kWait));
  if (r.hold) Row(out, "hold", "yes", Origin(r, Opt::kHold));
  if (r.sky.any_cluster) {
    std::string list;
    for (const auto& c : r.sky.clusters) list += (list.empty() ? "" : ",") + c;
    Row(out, "sky", list.empty() ? "--sky-any-cluster" : "--sky-any-cluster=" + list,
        Origin(r, Opt::kSkyAnyCluster));
  }
  for (const auto& w : r.warnings) out += fmt::format("  warning: {}\n", w);
  return out;
}

// The clusters with candidates of which none can run the job (infeasible,
// unreachable, excluded, over budget), each with its candidates' reasons.
std::map<std::string, std::vector<std::string>> RefusedByPlacement(const place::Plan& plan) {
  std::map<std::string, std::vector<std::string>> reasons;
  std::set<std::string> runnable;
  for (std::size_t i = 0; i < plan.candidates.size(); ++i) {
    const place::Verdict& v = plan.decision.verdicts[i];
    const std::string& cluster = plan.candidates[i].cluster;
    using Kind = place::Verdict::Kind;
    if (v.kind == Kind::kInfeasible || v.kind == Kind::kUnreachable || v.kind == Kind::kExcluded ||
        v.kind == Kind::kOverBudget) {
      auto& list = reasons[cluster];
      const std::string& partition = plan.candidates[i].partition;
      std::string reason = partition.empty() ? v.reason : partition + ": " + v.reason;
      if (std::find(list.begin(), list.end(), reason) == list.end()) list.push_back(reason);
    } else {
      runnable.insert(cluster);
    }
  }
  for (const auto& name : runnable) reasons.erase(name);
  return reasons;
}

std::string ArgsLine(const std::vector<std::string>& args) { return ShellJoin(args); }

std::string RenderPlacement(const place::Plan& plan) {
  std::string out = "\nPlacement\n";
  for (std::size_t i = 0; i < plan.candidates.size(); ++i) {
    const auto& c = plan.candidates[i];
    const auto& v = plan.decision.verdicts[i];
    const std::string where = c.cluster + (c.partition.empty() ? "" : "/" + c.partition);
    std::string start = v.start ? fmt::format("{} ({})", place::FormatWait(*v.start, plan.now),
                                              place::FormatUtc(*v.start))
                                : "-";
    out +=
        fmt::format("  {:<24} {:<14} {:<34} {}\n", where, place::KindName(v.kind), start, v.reason);
    if (v.start && !c.start_basis.empty() && c.start_basis != "sbatch --test-only") {
      out += fmt::format("  {:<24} {:<14} {:<34} estimate: {}\n", "", "", "", c.start_basis);
    }
    if (v.cost) {
      out += fmt::format("  {:<24} {:<14} {:<34} cost: {} for its time limit{}{}\n", "", "", "",
                         place::FormatCost(*v.cost, plan.decision.currency),
                         c.cost_basis.empty() ? "" : ", ", c.cost_basis);
    }
  }
  // Place() says why none when none (a budget's figures among it).
  out += fmt::format("  => {}\n", plan.decision.summary.empty() ? "no cluster can run the job"
                                                                : plan.decision.summary);
  return out;
}

}  // namespace

ExplainText RenderExplain(const job::Request& request, const Workspace& ws, const place::Plan& plan,
                          bool with_placement, const std::string& submit_dir) {
  // The options as typed (and from SBATCH_* variables), to compare with
  // what each cluster gets.
  std::vector<std::string> original_options;
  {
    std::size_t last_word = SIZE_MAX;
    for (const auto& s : request.settings) {
      if (s.origin.kind == job::Origin::Kind::kEnvironment) {
        original_options.push_back(s.occurrence.value
                                       ? fmt::format("--{}={}", s.name(), *s.occurrence.value)
                                       : "--" + s.name());
      } else if (s.origin.kind == job::Origin::Kind::kCommandLine &&
                 !(s.occurrence.bundled && s.occurrence.first_word == last_word)) {
        original_options.insert(original_options.end(), s.occurrence.words.begin(),
                                s.occurrence.words.end());
        last_word = s.occurrence.first_word;
      }
    }
  }
  std::string out = RequestSummary(request, ws.catalog);
  // The summary, the chosen line and the exit status agree: a cluster whose
  // every candidate placement ruled out (its own sbatch --test-only said no:
  // a node it lacks, a limit) cannot run the job, whatever its translation.
  const std::map<std::string, std::vector<std::string>> refused =
      with_placement ? RefusedByPlacement(plan) : std::map<std::string, std::vector<std::string>>{};
  std::vector<std::string> can, cannot;
  for (std::size_t i = 0; i < ws.handles.size(); ++i) {
    const place::ClusterHandle& h = ws.handles[i];
    const place::ClusterResult& r = plan.clusters[i];
    out += fmt::format("\n{}{}: ", h.name, h.home ? " (home)" : "");
    if (!h.excluded.empty()) {
      out += fmt::format("not considered\n  - {}\n", h.excluded);
      cannot.push_back(h.name);
      continue;
    }
    if (!r.translation) {
      out += fmt::format("no answer\n  - {}\n", r.unreachable);
      cannot.push_back(h.name);
      continue;
    }
    const translate::Translation& t = *r.translation;
    if (!t.ok()) {
      out += "cannot run it\n";
      for (const auto& reason : t.reasons) out += fmt::format("  - {}\n", reason);
      cannot.push_back(h.name);
      continue;
    }
    if (auto it = refused.find(h.name); it != refused.end()) {
      out += "cannot run it\n";
      for (const auto& reason : it->second) out += fmt::format("  - {}\n", reason);
      cannot.push_back(h.name);
      continue;
    }
    can.push_back(h.name);
    const translate::TranslatedJob& job = *t.job;
    const bool changed_script = job.script != request.script;
    const bool changed_args = job.args != original_options;
    out += changed_script || !job.changes.empty() ? "can run it, translated\n"
                                                  : "can run it as written\n";
    if (!job.partition_note.empty()) out += fmt::format("  partition: {}\n", job.partition_note);
    if (!h.roots.empty()) out += fmt::format("  paths: {}\n", translate::DescribeRoots(h.roots));
    if (!h.home) {
      // Where it would run there, and whether its folder is copied first.
      const sync::WorkdirPlan folder = place::PlanJobFolder(ws, h, request, "<sky id>", submit_dir);
      if (!folder.reason.empty()) out += fmt::format("  folder: {}\n", folder.reason);
    }
    if (!job.changes.empty()) {
      out += "  changes:\n";
      for (const auto& c : job.changes) {
        out += fmt::format("    {}: {} ({})\n", c.where, c.what, c.why);
      }
    }
    if (changed_script) {
      out += fmt::format("  script ({} as written -> for {}):\n", request.script_name, h.name);
      out += FormatDiff(DiffLines(request.script, job.script), "    ");
    }
    if (job.native != nullptr) {
      out += fmt::format("  runs as: {}\n", job.native->Summary());
    } else if (changed_args) {
      out += fmt::format("  sbatch options: {}\n", ArgsLine(job.args));
    }
    for (const auto& caveat : job.caveats) out += fmt::format("  note: {}\n", caveat);
  }
  if (with_placement) out += RenderPlacement(plan);
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s.empty() ? std::string("none") : s;
  };
  out += fmt::format("\nCan run it: {}. Cannot: {}.\n", list(can), list(cannot));
  return {out, !can.empty()};
}

}  // namespace skyslurm::place
