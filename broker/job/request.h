// The canonical request: what a job asks for, read from the command line, the
// SBATCH_* environment and the script's #SBATCH lines with Slurm's
// precedence (command line over environment over script), each value with
// where it came from.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/job/argv_parser.h"
#include "broker/job/array_indices.h"
#include "broker/job/directives.h"
#include "broker/job/gpu_demand.h"
#include "broker/job/option_table.h"
#include "broker/job/script.h"
#include "broker/job/steps.h"
#include "broker/job/values.h"
#include "broker/util/status.h"

namespace skyslurm::job {

struct Origin {
  enum class Kind { kDirective, kEnvironment, kCommandLine };
  Kind kind = Kind::kCommandLine;
  int line = 0;               // kDirective: the script line
  std::string variable;       // kEnvironment: SBATCH_*
  std::size_t directive = 0;  // kDirective: index into Request::directives.directives
  // "job.sh:3", "SBATCH_PARTITION", "command line".
  std::string Describe(std::string_view script_name) const;
};

// One option as given, from one source.
struct Setting {
  Occurrence occurrence;
  Origin origin;
  // In a heterogeneous job's later component: carried on from the component
  // before, as sbatch carries it (hetjob.h), not written there.
  bool inherited = false;
  Opt id() const { return occurrence.spec != nullptr ? occurrence.spec->id : Opt::kOther; }
  const std::string& name() const { return occurrence.name; }
};

struct GpuAsk {
  enum class Scope { kPerNode, kPerJob, kPerTask, kPerSocket };
  Scope scope = Scope::kPerNode;
  std::string type;  // as written; "" for any GPU
  std::int64_t count = 0;
  Opt option = Opt::kGres;  // --gres, --gpus, --gpus-per-node, ...
  Origin origin;
};
std::string_view ScopeName(GpuAsk::Scope scope);

struct SkyRequest {
  bool any_cluster = false;
  std::vector<std::string> clusters;  // --sky-any-cluster=a,b (empty: all)
  std::optional<std::string> infra;
  bool explain = false;
  bool managed = false;
  int retry_on_failure = 0;
  std::optional<std::string> image;  // --sky-image: a Kubernetes cluster's container image
  // --sky-workdir=DIR: the folder copied to a peer and run in there (default:
  // the folder the job is submitted from); "none": nothing is copied.
  std::optional<std::string> workdir;
  // --sky-sync-back=PATTERN (repeatable): files of the job's folder there
  // matching it are fetched into the submit folder when the job ends.
  std::vector<std::string> sync_back;
  bool wanted() const { return any_cluster || infra.has_value() || explain || managed; }
};

struct Request {
  Tool tool = Tool::kSbatch;
  // The option table the settings point into (it owns the SPANK options'
  // specs): shared, so that copies of the request stay valid.
  std::shared_ptr<const OptionTable> table;
  std::string script_name;      // path as given, or "(stdin)" (RequestInput::stdin_name) / "(wrap)"
  bool script_operand = false;  // the script is the first operand of the arguments
  std::string script;           // the script text
  std::vector<std::string> script_args;
  DirectiveScan directives;
  // Every option in the order Slurm applies them (script, environment,
  // command line): later wins.
  std::vector<Setting> settings;
  std::vector<std::string> warnings;

  // The effective value of each option the broker interprets.
  std::optional<NodeCount> nodes;
  std::optional<std::int64_t> ntasks, ntasks_per_node, cpus_per_task, ntasks_per_gpu, cpus_per_gpu;
  // --exclusive (its value: "", "user" or "mcs"): whole nodes.
  std::optional<std::string> exclusive;
  std::optional<std::int64_t> mem_mb, mem_per_cpu_mb, mem_per_gpu_mb;
  std::optional<TimeLimit> time_limit, time_min;
  std::vector<GpuAsk> gpus;
  // What `gpus` add up to (gpu_demand.h): read once, by ParseRequest.
  GpuDemand gpu_demand;
  std::vector<GresItem> other_gres;
  std::optional<std::string> constraint;
  std::vector<std::string> features;    // plain names in --constraint
  std::vector<std::string> partitions;  // -p a,b
  std::optional<std::string> account, qos, job_name, array, dependency, output, error, input, chdir,
      container, export_env, wrap, reservation, nodelist, exclude, licenses, comment;
  // --array read (array_indices.h); `array` keeps the text as written.
  std::optional<ArrayIndices> array_indices;
  // skyslurmd answered the sky jobs --dependency named (sky_dependency.h):
  // `dependency` is what is left for sbatch (nullopt: nothing), and every
  // --dependency occurrence is sent as that.
  bool dependency_resolved = false;
  bool hold = false, wait = false, parsable = false, test_only = false;
  bool hetjob = false;
  // Its components are (also) the command line's ':' groups.
  bool het_on_command_line = false;
  std::vector<std::string> other_container_options;  // pyxis-style --container-*
  SkyRequest sky;
  std::vector<ModuleUse> modules;
  // Options of the script's own srun/salloc steps that only a plugin takes.
  std::vector<StepPluginOption> step_plugin_options;
  // A heterogeneous job's components after the first (this request is
  // component 0), each read as sbatch reads it (hetjob.h): what the one
  // before carries on, then its own #SBATCH lines (from its hetjob line
  // on), the SBATCH_* environment and its ':' group of the command line
  // (without ':', sbatch reads the whole command line again for each
  // component: copies marked `inherited`).
  // Each has its own settings and values, and no components or script.
  std::vector<Request> het_components;
  // All components: 1 + het_components.size().
  std::size_t ComponentCount() const { return 1 + het_components.size(); }
  // Component `index` (0: this request).
  const Request& Component(std::size_t index) const {
    return index == 0 ? *this : het_components[index - 1];
  }

  // The setting in effect for an option, if any.
  const Setting* Effective(Opt id) const;
  const Setting* EffectiveByName(std::string_view name) const;
};

struct RequestInput {
  Tool tool = Tool::kSbatch;
  // The command's arguments without argv[0]: options, then (sbatch) the script
  // and its arguments.
  std::vector<std::string> args;
  // The environment the command runs in (SBATCH_* options are read from it).
  std::map<std::string, std::string> env;
  // The script's text when it does not come from the file named in args
  // (read from stdin); with neither, the file is read.
  std::optional<std::string> script_text;
  // What messages call a script that comes as text with no file named
  // ("(task finetune.yaml)" for skyslurm launch's).
  std::string stdin_name = "(stdin)";
  // SPANK options of the site's plugins (ParseSpankOptionsFromHelp).
  std::vector<SpankOption> spank_options;
};

// Parses and checks everything. Errors name the file and line, the
// environment variable, or "command line", and the option; nothing partial
// is returned.
Result<Request> ParseRequest(const RequestInput& input);

// The name Slurm gives the job: --job-name, else the script's file name,
// "wrap" for --wrap, "sbatch" for a script read from stdin.
std::string SlurmJobName(const Request& request);

}  // namespace skyslurm::job
