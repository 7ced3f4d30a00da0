#include "broker/job/request.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "broker/job/hetjob.h"
#include "broker/util/strings.h"
#include "broker/util/trace.h"
#include "common/sky_options.h"

namespace skyslurm::job {
namespace {

// The script sbatch writes for --wrap (src/sbatch/sbatch.c).
std::string WrapScript(std::string_view command) {
  return fmt::format("#!/bin/sh\n# This script was created by sbatch --wrap.\n\n{}\n", command);
}

class Interpreter {
 public:
  explicit Interpreter(Request& request) : r_(request) {}

  Status Apply(const Setting& s) {
    const std::string& value = s.occurrence.value ? *s.occurrence.value : kEmpty;
    auto fail = [&](const Status& st) {
      return InvalidArgumentError(
          fmt::format("{}: --{}: {}", s.origin.Describe(r_.script_name), s.name(), st.message()));
    };
    switch (s.id()) {
      case Opt::kNodes: {
        auto v = ParseNodeCount(value);
        if (!v.ok()) return fail(v.status());
        r_.nodes = *v;
        break;
      }
      case Opt::kNtasks:
        return Count(s, value, &r_.ntasks, fail);
      case Opt::kNtasksPerNode:
        return Count(s, value, &r_.ntasks_per_node, fail);
      case Opt::kCpusPerTask:
        return Count(s, value, &r_.cpus_per_task, fail);
      case Opt::kNtasksPerGpu:
        return Count(s, value, &r_.ntasks_per_gpu, fail);
      case Opt::kCpusPerGpu:
        return Count(s, value, &r_.cpus_per_gpu, fail);
      case Opt::kMem:
        return Memory(value, &r_.mem_mb, fail);
      case Opt::kMemPerCpu: {
        SKY_RETURN_IF_ERROR(Memory(value, &r_.mem_per_cpu_mb, fail));
        if (r_.mem_per_cpu_mb == 0) {  // Slurm: all of each node's memory, as --mem=0
          r_.mem_per_cpu_mb.reset();
          r_.mem_mb = 0;
        }
        break;
      }
      case Opt::kMemPerGpu:
        return Memory(value, &r_.mem_per_gpu_mb, fail);
      case Opt::kTime:
      case Opt::kTimeMin: {
        auto v = ParseTimeLimit(value);
        if (!v.ok()) return fail(v.status());
        (s.id() == Opt::kTime ? r_.time_limit : r_.time_min) = *v;
        break;
      }
      case Opt::kGres: {
        auto items = ParseGresList(value);
        if (!items.ok()) return fail(items.status());
        DropGpus(Opt::kGres);
        r_.other_gres.clear();
        for (const auto& item : *items) {
          if (item.name == "gpu") {
            r_.gpus.push_back(
                {GpuAsk::Scope::kPerNode, item.type, item.count, Opt::kGres, s.origin});
          } else {
            r_.other_gres.push_back(item);
          }
        }
        break;
      }
      case Opt::kGpus:
        return Gpus(s, value, GpuAsk::Scope::kPerJob, fail);
      case Opt::kGpusPerNode:
        return Gpus(s, value, GpuAsk::Scope::kPerNode, fail);
      case Opt::kGpusPerTask:
        return Gpus(s, value, GpuAsk::Scope::kPerTask, fail);
      case Opt::kGpusPerSocket:
        return Gpus(s, value, GpuAsk::Scope::kPerSocket, fail);
      case Opt::kConstraint:
        r_.constraint = value;
        r_.features = ConstraintFeatures(value);
        break;
      case Opt::kPartition:
        r_.partitions = SplitList(value);
        break;
      case Opt::kAccount:
        r_.account = value;
        break;
      case Opt::kQos:
        r_.qos = value;
        break;
      case Opt::kJobName:
        r_.job_name = value;
        break;
      case Opt::kArray: {
        auto indices = ParseArrayIndices(value);
        if (!indices.ok()) return fail(indices.status());
        // An empty value (or commas only) is no array, as sbatch takes it.
        r_.array_indices = *indices;
        r_.array = *indices ? std::optional<std::string>(value) : std::nullopt;
        break;
      }
      case Opt::kDependency:
        r_.dependency = value;
        break;
      case Opt::kOutput:
      case Opt::kError:
      case Opt::kInput:
      case Opt::kChdir:
      case Opt::kContainer:
      case Opt::kExport:
      case Opt::kReservation:
      case Opt::kNodelist:
      case Opt::kExclude:
      case Opt::kLicenses:
      case Opt::kComment:
      case Opt::kWrap:
      case Opt::kExclusive:
        *Text(s.id()) = value;
        break;
      case Opt::kHold:
        r_.hold = true;
        break;
      case Opt::kWait:
        if (r_.tool == Tool::kSbatch) r_.wait = true;
        break;
      case Opt::kParsable:
        r_.parsable = true;
        break;
      case Opt::kTestOnly:
        r_.test_only = true;
        break;
      case Opt::kSpank:
        if (s.name().starts_with("container")) r_.other_container_options.push_back(s.name());
        break;
      default:
        if (const auto sky = SkyOptionOf(s.id())) return Sky(s, *sky);
        break;
    }
    return OkStatus();
  }

 private:
  template <typename Fail>
  Status Count(const Setting&, const std::string& value, std::optional<std::int64_t>* out,
               Fail fail) {
    auto v = ParsePositiveCount(value);
    if (!v.ok()) return fail(v.status());
    *out = *v;
    return OkStatus();
  }
  template <typename Fail>
  Status Memory(const std::string& value, std::optional<std::int64_t>* out, Fail fail) {
    auto v = ParseMemoryMb(value);
    if (!v.ok()) return fail(v.status());
    *out = *v;
    return OkStatus();
  }
  void DropGpus(Opt option) {
    std::erase_if(r_.gpus, [&](const GpuAsk& g) { return g.option == option; });
  }
  template <typename Fail>
  Status Gpus(const Setting& s, const std::string& value, GpuAsk::Scope scope, Fail fail) {
    auto list = ParseGpuList(value);
    if (!list.ok()) return fail(list.status());
    DropGpus(s.id());
    for (const auto& g : *list) r_.gpus.push_back({scope, g.type, g.count, s.id(), s.origin});
    return OkStatus();
  }
  Status Sky(const Setting& s, sky::SkyOption which) {
    using sky::SkyOption;
    const auto& value = s.occurrence.value;
    const char* raw = value ? value->c_str() : nullptr;
    if (std::string problem = sky::ValidateOptionValue(which, raw); !problem.empty()) {
      return InvalidArgumentError(
          fmt::format("{}: {}", s.origin.Describe(r_.script_name), problem));
    }
    switch (which) {
      case SkyOption::kAnyCluster:
        r_.sky.any_cluster = true;
        r_.sky.clusters = sky::IsAbsentValue(raw) ? std::vector<std::string>{} : SplitList(*value);
        break;
      case SkyOption::kInfra:
        r_.sky.infra = *value;
        break;
      case SkyOption::kExplain:
        r_.sky.explain = true;
        break;
      case SkyOption::kManaged:
        r_.sky.managed = true;
        break;
      case SkyOption::kRetryOnFailure:
        r_.sky.retry_on_failure = std::stoi(*value);
        break;
      case SkyOption::kImage:
        r_.sky.image = *value;
        break;
      case SkyOption::kWorkdir:
        r_.sky.workdir = *value;
        break;
      case SkyOption::kSyncBack:
        r_.sky.sync_back.push_back(*value);
        break;
    }
    return OkStatus();
  }

  // Where an option kept as its text goes.
  std::optional<std::string>* Text(Opt id) {
    switch (id) {
      case Opt::kOutput:
        return &r_.output;
      case Opt::kError:
        return &r_.error;
      case Opt::kInput:
        return &r_.input;
      case Opt::kChdir:
        return &r_.chdir;
      case Opt::kContainer:
        return &r_.container;
      case Opt::kExport:
        return &r_.export_env;
      case Opt::kReservation:
        return &r_.reservation;
      case Opt::kNodelist:
        return &r_.nodelist;
      case Opt::kExclude:
        return &r_.exclude;
      case Opt::kLicenses:
        return &r_.licenses;
      case Opt::kComment:
        return &r_.comment;
      case Opt::kWrap:
        return &r_.wrap;
      case Opt::kExclusive:
      default:  // Apply sends only the ids above
        return &r_.exclusive;
    }
  }

  static inline const std::string kEmpty;
  Request& r_;
};

}  // namespace

std::string Origin::Describe(std::string_view script_name) const {
  switch (kind) {
    case Kind::kDirective:
      return fmt::format("{}:{}", script_name, line);
    case Kind::kEnvironment:
      return variable;
    case Kind::kCommandLine:
      return "command line";
  }
  return "command line";
}

std::string_view ScopeName(GpuAsk::Scope scope) {
  switch (scope) {
    case GpuAsk::Scope::kPerNode:
      return "per node";
    case GpuAsk::Scope::kPerJob:
      return "per job";
    case GpuAsk::Scope::kPerTask:
      return "per task";
    case GpuAsk::Scope::kPerSocket:
      return "per socket";
  }
  return "per node";
}

const Setting* Request::Effective(Opt id) const {
  for (auto it = settings.rbegin(); it != settings.rend(); ++it) {
    if (it->id() == id) return &*it;
  }
  return nullptr;
}

const Setting* Request::EffectiveByName(std::string_view name) const {
  for (auto it = settings.rbegin(); it != settings.rend(); ++it) {
    if (it->name() == name) return &*it;
  }
  return nullptr;
}

Result<Request> ParseRequest(const RequestInput& input) {
  // Counted in a submission's trace (SKYSLURM_TRACE): once each.
  trace::Span span("parse the job's options and script", trace::Cost::kParse);
  auto owned_table = std::make_shared<OptionTable>(input.tool);
  for (const auto& spank : input.spank_options) owned_table->AddSpankOption(spank.name, spank.arg);
  const OptionTable& table = *owned_table;

  Request r;
  r.tool = input.tool;
  r.table = owned_table;
  SKY_ASSIGN_OR_RETURN(ParsedArgs cli,
                       ParseArgs(table, input.args, OperandPolicy::kStopAtFirst, "command line"));
  r.warnings = cli.warnings;
  r.hetjob = cli.het_separator;
  r.het_on_command_line = cli.het_separator;
  // Each component's #SBATCH lines (a hetjob line starts the next).
  std::vector<std::vector<Setting>> directive_settings(1);

  std::optional<std::string> wrap;
  for (const auto& occ : cli.options) {
    if (occ.spec != nullptr && occ.spec->id == Opt::kWrap) wrap = occ.value;
  }

  if (input.tool == Tool::kSbatch) {
    if (wrap.has_value()) {
      if (!cli.operands.empty()) {
        return InvalidArgumentError("command line: script arguments are not permitted with --wrap");
      }
      r.script_name = "(wrap)";
      r.script = WrapScript(*wrap);
    } else if (!cli.operands.empty()) {
      r.script_name = cli.operands[0];
      r.script_operand = true;
      r.script_args.assign(cli.operands.begin() + 1, cli.operands.end());
      if (input.script_text.has_value()) {
        SKY_RETURN_IF_ERROR(CheckScriptText(*input.script_text, r.script_name));
        r.script = *input.script_text;
      } else {
        SKY_ASSIGN_OR_RETURN(r.script, ReadScriptFile(r.script_name));
      }
    } else {
      r.script_name = input.stdin_name;
      if (!input.script_text.has_value()) {
        return InvalidArgumentError("no batch script: give a file, --wrap, or a script on stdin");
      }
      SKY_RETURN_IF_ERROR(CheckScriptText(*input.script_text, r.script_name));
      r.script = *input.script_text;
    }
    SKY_ASSIGN_OR_RETURN(r.directives, ScanDirectives(r.script, r.script_name));
    for (const auto& w : r.directives.warnings) r.warnings.push_back(w);
    r.hetjob = r.hetjob || r.directives.hetjob;
    for (std::size_t d = 0; d < r.directives.directives.size(); ++d) {
      const Directive& directive = r.directives.directives[d];
      if (directive.het_separator) directive_settings.emplace_back();
      SKY_ASSIGN_OR_RETURN(
          ParsedArgs parsed,
          ParseArgs(table, directive.words, OperandPolicy::kReject, r.script_name, directive.line));
      for (const auto& warning : parsed.warnings) {
        r.warnings.push_back(fmt::format("{}:{}: {}", r.script_name, directive.line, warning));
      }
      for (auto& occ : parsed.options) {
        directive_settings.back().push_back(
            {std::move(occ), Origin{Origin::Kind::kDirective, directive.line, "", d}});
      }
    }
    r.modules = FindModuleLoads(r.script, r.directives.body_start_line);
    r.step_plugin_options = FindStepPluginOptions(r.script, r.directives.body_start_line);
  } else {
    r.script_args = cli.operands;  // salloc/srun: the command to run
  }

  std::vector<Setting> env_settings;
  for (const auto& env : EnvOptions()) {
    if ((env.tools & static_cast<ToolMask>(input.tool)) == 0) continue;
    auto it = input.env.find(std::string(env.variable));
    if (it == input.env.end()) continue;
    const OptionSpec* spec = table.Find(env.option);
    if (spec == nullptr) continue;
    Occurrence occ;
    occ.spec = spec;
    occ.name = std::string(spec->name);
    if (spec->arg != Arg::kNone) occ.value = it->second;
    env_settings.push_back(
        {std::move(occ), Origin{Origin::Kind::kEnvironment, 0, std::string(env.variable), 0}});
  }
  std::vector<std::vector<Setting>> command_line_settings(1);
  for (auto& occ : cli.options) {
    const auto component = static_cast<std::size_t>(occ.component);
    if (command_line_settings.size() <= component) command_line_settings.resize(component + 1);
    command_line_settings[component].push_back(
        {std::move(occ), Origin{Origin::Kind::kCommandLine, 0, "", 0}});
  }
  // Each component's settings in the order sbatch applies them.
  const std::size_t components = std::max(directive_settings.size(), command_line_settings.size());
  auto own_settings = [&](std::size_t k, std::vector<Setting>& out) {
    if (k < directive_settings.size()) {
      out.insert(out.end(), directive_settings[k].begin(), directive_settings[k].end());
    }
    out.insert(out.end(), env_settings.begin(), env_settings.end());
    if (k < command_line_settings.size()) {
      out.insert(out.end(), command_line_settings[k].begin(), command_line_settings[k].end());
    } else if (!r.het_on_command_line) {
      // No ':': sbatch reads the command line again for every component.
      for (const Setting& s : command_line_settings[0]) {
        out.push_back(s);
        out.back().inherited = true;
      }
    }
  };
  own_settings(0, r.settings);
  // SKYSLURM_ANY_CLUSTER=1 asks for routing like --sky-any-cluster does.
  if (auto it = input.env.find("SKYSLURM_ANY_CLUSTER");
      it != input.env.end() && !it->second.empty() && it->second != "0") {
    r.sky.any_cluster = true;
  }

  Interpreter interpreter(r);
  for (const Setting& s : r.settings) SKY_RETURN_IF_ERROR(interpreter.Apply(s));
  r.gpu_demand = DemandOf(r);
  for (std::size_t k = 1; k < components; ++k) {
    Request c;
    c.tool = r.tool;
    c.table = r.table;
    c.script_name = r.script_name;
    c.hetjob = true;
    for (const Setting& s : (k == 1 ? r : r.het_components.back()).settings) {
      if (ResetForEachComponent(s.name()) || SkyOptionOf(s.id())) continue;
      c.settings.push_back(s);
      c.settings.back().inherited = true;
    }
    own_settings(k, c.settings);
    Interpreter component(c);
    for (const Setting& s : c.settings) SKY_RETURN_IF_ERROR(component.Apply(s));
    c.gpu_demand = DemandOf(c);
    r.het_components.push_back(std::move(c));
  }
  return r;
}

std::string SlurmJobName(const Request& request) {
  if (request.job_name) return *request.job_name;
  if (request.wrap) return "wrap";
  if (!request.script_operand) return "sbatch";
  return std::filesystem::path(request.script_name).filename().string();
}

}  // namespace skyslurm::job
