#include "broker/backend/slurm/slurm_backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "broker/backend/slurm/array_throttle.h"
#include "broker/backend/slurm/slurm_accounting.h"
#include "broker/backend/slurm/slurm_state.h"
#include "broker/backend/slurm/squeue.h"
#include "broker/job/argv_parser.h"
#include "broker/job/option_table.h"
#include "broker/util/deadline.h"
#include "broker/util/strings.h"
#include "broker/util/timestamp.h"
#include "broker/util/trace.h"

namespace skyslurm::backend {

Result<StartEstimate> ParseTestOnly(std::string_view output) {
  const auto at = output.find(" to start at ");
  if (at == std::string_view::npos) {
    return UnavailableError(fmt::format("sbatch --test-only gave no start time: {}", Trim(output)));
  }
  std::string_view rest = output.substr(at + 13);
  StartEstimate e;
  auto when = ParseUtcTimestamp(rest.substr(0, rest.find(' ')));
  if (!when) {
    return InvalidArgumentError(
        fmt::format("sbatch --test-only: unreadable time in: {}", Trim(output)));
  }
  e.start = *when;
  if (auto n = rest.find(" on nodes "); n != std::string_view::npos) {
    std::string_view nodes = rest.substr(n + 10);
    e.nodes = std::string(nodes.substr(0, nodes.find(' ')));
  }
  if (auto p = rest.find(" in partition "); p != std::string_view::npos) {
    e.partition = Trim(rest.substr(p + 14, rest.find('\n', p) - p - 14));
  }
  e.basis = "sbatch --test-only";
  return e;
}

SlurmBackend::SlurmBackend(std::string name, CommandRunner& runner,
                           std::vector<std::pair<std::string, std::string>> env,
                           std::string modulepath, std::string slurm_bin_dir)
    : name_(std::move(name)),
      runner_(runner),
      env_(std::move(env)),
      modulepath_(std::move(modulepath)),
      slurm_bin_dir_(std::move(slurm_bin_dir)) {}

void SlurmBackend::Prepare(Command& command, bool utc) const {
  static const char* kSlurm[] = {"sbatch", "salloc",   "srun",    "squeue",
                                 "sinfo",  "scontrol", "scancel", "sacct"};
  if (!slurm_bin_dir_.empty() && !command.argv.empty()) {
    for (const char* name : kSlurm) {
      if (command.argv[0] == name) command.argv[0] = slurm_bin_dir_ + "/" + name;
    }
  }
  command.env_set.insert(command.env_set.begin(), env_.begin(), env_.end());
  // Times Slurm prints are read as UTC. Never for a submission: sbatch
  // hands its environment to the job, whose TZ must stay the user's.
  if (utc) command.env_set.emplace_back("TZ", "UTC");
  // A skyslurm shim on that side must not route these commands again.
  command.env_unset.push_back("SKYSLURM_ANY_CLUSTER");
  // Nor answer skyslurm's own looks at a queue with routed jobs merged in
  // (the shim's squeue lists the user's routed jobs once there are some):
  // a daemon started from a shell with the shim first on PATH read its
  // peers' jobs as the home's. Not for sbatch, salloc, srun: their
  // environment becomes the job's, whose own squeue must merge.
  const std::string_view program =
      command.argv.empty()
          ? std::string_view()
          : std::string_view(command.argv[0]).substr(command.argv[0].rfind('/') + 1);
  if (program == "squeue" || program == "sacct" || program == "scontrol" || program == "scancel" ||
      program == "sinfo") {
    command.env_set.emplace_back("SKYSLURM_CLIENT_DIRECT", "1");
  }
}

Capabilities SlurmBackend::capabilities() const { return SlurmCapabilities(); }

Capabilities SlurmCapabilities() { return Capabilities{}; }

Result<CommandOutput> SlurmBackend::RunChecked(Command command, std::chrono::milliseconds timeout,
                                               bool utc) {
  const std::string program = command.argv.empty() ? "" : command.argv[0];
  Prepare(command, utc);
  command.timeout = timeout;
  return Checked(program, runner_.Run(command));
}

Result<CommandOutput> SlurmBackend::Checked(const std::string& program,
                                            Result<CommandOutput> out) const {
  if (!out.ok()) return out.status().WithContext(name_);
  if (!out->success()) {
    const std::string said = Trim(out->err.empty() ? out->out : out->err);
    return UnavailableError(fmt::format("{}: {} failed ({}){}{}", name_, program,
                                        out->DescribeEnd(), said.empty() ? "" : ": ", said));
  }
  return out;
}

void SlurmBackend::CacheModules(std::string dir, std::chrono::seconds ttl) {
  module_cache_dir_ = std::move(dir);
  module_cache_ttl_ = ttl;
}

Result<std::string> SlurmBackend::SlurmVersion(std::chrono::milliseconds timeout) {
  SKY_ASSIGN_OR_RETURN(CommandOutput out, RunChecked({.argv = {"sinfo", "--version"}}, timeout));
  return Trim(out.out);  // "slurm-wlm 22.05.8" or "slurm 22.05.8"
}

CheckAnswer SlurmBackend::Check(std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  auto version = SlurmVersion(timeout);
  if (!version.ok()) return {.verdict = "no answer", .detail = version.status().message()};
  // The controller itself, not only the client.
  CheckAnswer answer = Backend::Check(deadline.left());
  if (answer.ok()) answer.detail = *version + "; " + answer.detail;
  return answer;
}

bool SlurmBackend::CachedLines(const std::string& kind, std::vector<std::string>* out) const {
  if (module_cache_dir_.empty()) return false;
  const std::string file = module_cache_dir_ + "/" + name_ + "." + kind;
  std::error_code ec;
  const auto written = std::filesystem::last_write_time(file, ec);
  if (ec || std::filesystem::file_time_type::clock::now() - written >= module_cache_ttl_) {
    return false;
  }
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  *out = SplitList(text.str(), '\n');
  return true;
}

void SlurmBackend::KeepLines(const std::string& kind, const std::vector<std::string>& lines) const {
  if (module_cache_dir_.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(module_cache_dir_, ec);
  const std::string file = module_cache_dir_ + "/" + name_ + "." + kind;
  // A name of its own: the daemon and a command may write the same cache.
  const std::string tmp = fmt::format("{}.tmp.{}.{}", file, ::getpid(),
                                      std::hash<std::thread::id>{}(std::this_thread::get_id()));
  std::ofstream(tmp) << fmt::format("{}\n", fmt::join(lines, "\n"));
  std::filesystem::rename(tmp, file, ec);
}

Result<cluster::Inventory> SlurmBackend::Probe(std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  auto left = [&] { return deadline.left(); };
  cluster::Inventory inv;
  inv.description.name = name_;
  // Modules and plugin options, which change only when an admin changes
  // them, from the cache when it is fresh.
  auto cached = [&](const std::string& kind, std::vector<std::string>* out) {
    return CachedLines(kind, out);
  };
  auto keep = [&](const std::string& kind, const std::vector<std::string>& lines) {
    KeepLines(kind, lines);
  };
  const bool modules_cached = cached("modules", &inv.description.modules);
  inv.description.modules_known = modules_cached;
  const bool plugins_cached = cached("plugin-options", &inv.description.plugin_options);
  inv.description.plugin_options_known = plugins_cached;
  const bool srun_plugins_cached =
      cached("srun-plugin-options", &inv.description.srun_plugin_options);
  inv.description.srun_plugin_options_known = srun_plugins_cached;
  // The queries run side by side (over SSH through one channel): a probe
  // costs the slowest of them, not their sum.
  // sinfo --json lists nodes up to 22.05; 23.02 on, it groups nodes alike
  // unless asked per node (-N), which 22.05's json would answer with none:
  // -N once a cluster is known to be on a later release (cached).
  std::vector<std::string> sinfo_args;
  const bool per_node =
      cached("sinfo-args", &sinfo_args) && !sinfo_args.empty() && sinfo_args.front() == "-N";
  std::vector<Command> queries = {
      {.argv = {"scontrol", "show", "partition", "-o"}},
      {.argv = per_node ? std::vector<std::string>{"sinfo", "-N", "--json"}
                        : std::vector<std::string>{"sinfo", "--json"}},
      {.argv = {"squeue"}}};
  // Every job squeue still knows: the pending and running ones are the
  // queue, the lately ended ones say how much of their limits jobs run.
  for (auto& a : SqueueAllArgs()) queries[2].argv.push_back(a);
  if (!modules_cached) {
    // Lmod or Tcl modules, whichever the login shell has.
    Command modules;
    modules.argv = {
        "bash", "-c",
        "type module >/dev/null 2>&1 || . \"${LMOD_PKG:-/usr/share/lmod/lmod}/init/bash\" "
        ">/dev/null 2>&1; type module >/dev/null 2>&1 || exit 127; module -t avail 2>&1"};
    if (!modulepath_.empty()) modules.env_set.emplace_back("MODULEPATH", modulepath_);
    queries.push_back(std::move(modules));
  }
  const std::size_t help_query = queries.size();
  if (!plugins_cached) queries.push_back({.argv = {"sbatch", "--help"}});
  const std::size_t srun_help_query = queries.size();
  if (!srun_plugins_cached) queries.push_back({.argv = {"srun", "--help"}});
  // MaxArraySize, as rarely changed as the modules: cached alike.
  std::vector<std::string> config_lines;
  const bool config_cached = cached("max-array-size", &config_lines);
  if (config_cached && !config_lines.empty()) {
    inv.description.max_array_size = cluster::ParseMaxArraySize(config_lines.front());
  }
  const std::size_t config_query = queries.size();
  if (!config_cached) queries.push_back({.argv = {"scontrol", "show", "config"}});
  std::vector<std::string> programs;
  for (auto& q : queries) {
    programs.push_back(q.argv[0]);
    Prepare(q);
    q.timeout = left();
  }
  auto results = runner_.RunAll(queries);

  // scontrol first: when the controller is down, it fails with Slurm's own
  // words ("Unable to contact slurm controller"), where sinfo --json says
  // only "Unspecified error" and exits 0.
  SKY_ASSIGN_OR_RETURN(CommandOutput parts, Checked(programs[0], std::move(results[0])));
  auto partitions = cluster::ParseScontrolPartitions(parts.out);
  if (!partitions.ok()) return partitions.status().WithContext(name_);
  inv.description.partitions = std::move(*partitions);
  SKY_ASSIGN_OR_RETURN(CommandOutput sinfo, Checked(programs[1], std::move(results[1])));
  auto nodes = cluster::ParseSinfoJson(sinfo.out, &inv.description.slurm_version);
  if (!per_node && (nodes.status().code() == StatusCode::kFailedPrecondition ||
                    (nodes.ok() && cluster::ReleaseAtLeast(inv.description.slurm_version, 23)))) {
    // A later release: asked again per node, and so from now on.
    keep("sinfo-args", {"-N"});
    if (!nodes.ok()) {
      SKY_ASSIGN_OR_RETURN(CommandOutput again,
                           RunChecked({.argv = {"sinfo", "-N", "--json"}}, left()));
      nodes = cluster::ParseSinfoJson(again.out, &inv.description.slurm_version);
    }
  }
  if (!nodes.ok()) return nodes.status().WithContext(name_);
  inv.description.nodes = std::move(*nodes);
  inv.description.BuildIndex();
  SKY_ASSIGN_OR_RETURN(CommandOutput queue, Checked(programs[2], std::move(results[2])));
  auto jobs = ParseSqueueActive(queue.out);
  if (!jobs.ok()) return jobs.status().WithContext(name_);
  inv.limit_use = cluster::LearnLimitUse(*jobs);
  for (const auto& j : *jobs) {
    if (!IsLive(j.phase)) inv.ended.push_back(j.job_id);
  }
  std::erase_if(*jobs, [](const cluster::QueuedJob& j) { return !IsLive(j.phase); });
  inv.jobs = std::move(*jobs);
  if (!modules_cached) {
    // No module system there is no error: the job's modules then cannot be
    // checked, and the translation says so.
    if (auto out = Checked(programs[3], std::move(results[3])); out.ok()) {
      inv.description.modules = cluster::ParseModuleAvail(out->out);
      inv.description.modules_known = true;
      keep("modules", inv.description.modules);
    }
  }
  if (!plugins_cached) {
    if (auto out = Checked("sbatch", std::move(results[help_query])); out.ok()) {
      for (const auto& option : job::ParseSpankOptionsFromHelp(out->out)) {
        inv.description.plugin_options.push_back(option.name);
      }
      inv.description.plugin_options_known = true;
      keep("plugin-options", inv.description.plugin_options);
    }
  }
  if (!srun_plugins_cached) {
    if (auto out = Checked("srun", std::move(results[srun_help_query])); out.ok()) {
      for (const auto& option : job::ParseSpankOptionsFromHelp(out->out)) {
        inv.description.srun_plugin_options.push_back(option.name);
      }
      inv.description.srun_plugin_options_known = true;
      keep("srun-plugin-options", inv.description.srun_plugin_options);
    }
  }
  if (!config_cached) {
    if (auto out = Checked("scontrol", std::move(results[config_query])); out.ok()) {
      inv.description.max_array_size = cluster::ParseMaxArraySize(out->out);
      if (inv.description.max_array_size) {
        keep("max-array-size", {fmt::format("MaxArraySize = {}", *inv.description.max_array_size)});
      }
    }
  }
  inv.probed_at = std::time(nullptr);
  return inv;
}

translate::Translation SlurmBackend::Translate(const job::Request& request,
                                               const cluster::Description& target,
                                               const translate::TranslateContext& context) const {
  return translate::TranslateForSlurm(request, target, context);
}

std::optional<cluster::QueuedJob> SlurmBackend::AsQueued(const SubmitSpec& spec,
                                                         const JobKey& key) const {
  return QueuedAsSubmitted(spec, key);
}

Command SlurmBackend::TestOnlyCommand(const translate::TranslatedJob& job) const {
  Command c;
  c.argv = {"sbatch", "--test-only"};
  const job::OptionTable tool_table(job.tool);
  std::vector<std::string> args = job::RemoveOptions(
      tool_table, job.args,
      {job::Opt::kQuiet, job::Opt::kParsable, job::Opt::kWait, job::Opt::kVerbose});
  if (job.tool != job::Tool::kSbatch) {
    const job::OptionTable sbatch_table(job::Tool::kSbatch);
    auto parsed = job::ParseArgs(tool_table, args, job::OperandPolicy::kStopAtFirst, "");
    args.clear();
    if (parsed.ok()) {
      for (const auto& o : parsed->options) {
        if (o.spec == nullptr || sbatch_table.Find(o.spec->name) == nullptr) continue;
        args.push_back(o.value ? "--" + o.name + "=" + *o.value : "--" + o.name);
      }
    }
  }
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  if (job.script.empty()) c.argv.push_back("--wrap=true");
  c.stdin_data = job.script;
  Prepare(c);
  return c;
}

Result<StartEstimate> SlurmBackend::TestOnlyAnswer(Result<CommandOutput> out) const {
  // --test-only prints its answer on stderr and exits 0; a refusal exits 1.
  if (!out.ok()) return out.status().WithContext(name_);
  if (!out->success()) {
    const std::string said = Trim(out->err + out->out);
    // The scheduler's own no (a GRES it lacks, a limit, sbatch's own
    // parser): the job cannot run here as asked, which FailedPrecondition
    // says (backend.h). A controller out of reach, a timeout or a signal
    // says nothing of the job: no estimate.
    const bool transient = out->term_signal != 0 || out->exit_code != 1 ||
                           said.find("Unable to contact slurm controller") != std::string::npos ||
                           said.find("timed out") != std::string::npos ||
                           said.find("Zero Bytes were transmitted") != std::string::npos ||
                           said.find("Connection refused") != std::string::npos;
    const std::string message =
        fmt::format("{}: sbatch --test-only refused the job: {}", name_, said);
    return transient ? UnavailableError(message) : FailedPreconditionError(message);
  }
  auto e = ParseTestOnly(out->err + out->out);
  if (!e.ok()) return e.status().WithContext(name_);
  return e;
}

Result<StartEstimate> SlurmBackend::EstimateStart(const translate::TranslatedJob& job,
                                                  std::chrono::milliseconds timeout) {
  Command c = TestOnlyCommand(job);
  c.timeout = timeout;
  return TestOnlyAnswer(runner_.Run(c));
}

Result<std::vector<JobInfo>> SlurmBackend::JobsWithTag(const std::string& tag,
                                                       std::chrono::milliseconds timeout) {
  SKY_ASSIGN_OR_RETURN(std::vector<JobInfo> all, Jobs(timeout));
  // Only a live job: an ended one (a managed job's preempted copy) must not
  // stand in for the one being submitted now.
  std::erase_if(all, [&](const JobInfo& j) { return j.sky_id != tag || !IsLive(j.phase); });
  return all;
}

Result<std::vector<JobInfo>> SlurmBackend::Queue(std::chrono::milliseconds timeout) {
  // The compact form, every state (ended jobs too, while slurmctld keeps them).
  Command squeue{.argv = {"squeue"}};
  for (auto& a : SqueueAllArgs()) squeue.argv.push_back(a);
  SKY_ASSIGN_OR_RETURN(CommandOutput queue, RunChecked(squeue, timeout));
  auto jobs = ParseSqueueActive(queue.out);
  if (!jobs.ok()) return jobs.status().WithContext(name_);
  std::vector<JobInfo> out;
  for (const auto& q : *jobs) {
    // A heterogeneous job is its first component's line (its id is the
    // one sbatch printed); the others are parts of it, not jobs to follow.
    if (q.het_offset.value_or(0) > 0) continue;
    JobInfo info;
    info.key = {name_, q.job_id};
    info.sky_id = SkyIdInComment(q.comment).value_or("");
    info.state = q.state;
    info.phase = q.phase;
    info.reason = q.reason;
    info.partition = q.partition;
    info.user = q.user;
    info.name = q.name;
    info.submit_time = q.submit_time;
    info.start_time = q.start_time;
    info.end_time = q.end_time;
    info.exit_code = q.exit_code;
    out.push_back(std::move(info));
  }
  return out;
}

namespace {

// The job's own --export lists variables ("ALL,D=x", "NONE", "A,B"), not
// bare ALL: skyslurm's values join that list.
bool ExportListed(const SubmitSpec& spec) {
  return spec.user_export &&
         ::strcasecmp(spec.user_export->c_str(), "ALL") != 0;  // as sbatch reads it
}

}  // namespace

std::vector<std::pair<std::string, std::string>> SbatchSubmitEnvironment(const SubmitSpec& spec) {
  // skyslurm's values (a task's secrets among them) in sbatch's
  // environment, whether or not the job's --export lists names: a list
  // names them bare (SbatchSubmitOptions), never with their values.
  std::vector<std::pair<std::string, std::string>> env = spec.export_env;
  env.insert(env.end(), spec.export_values.begin(), spec.export_values.end());
  return env;
}

std::vector<std::string> SbatchSubmitOptions(const SubmitSpec& spec) {
  std::vector<std::string> options = {"--parsable"};
  // One --export, made below: the job's own (merged) would otherwise be
  // overridden by ours, the last one given.
  // A terminal's sbatch options have no terminal here: the answer is read
  // from --parsable.
  std::vector<job::Opt> removed = {job::Opt::kWait, job::Opt::kQuiet, job::Opt::kParsable};
  removed.push_back(job::Opt::kExport);
  const std::vector<std::string> args =
      job::RemoveOptions(job::OptionTable(job::Tool::kSbatch), spec.job.args, removed);
  options.insert(options.end(), args.begin(), args.end());
  // The command line wins over the script's --comment: carry the user's
  // comment first, then the tag.
  options.push_back("--comment=" + (spec.user_comment.empty() ? "" : spec.user_comment + " ") +
                    SkyTag(spec.sky_id));
  if (!spec.default_job_name.empty()) options.push_back("--job-name=" + spec.default_job_name);
  if (!spec.workdir.empty()) options.push_back("--chdir=" + spec.workdir);
  if (!spec.restartable) options.push_back("--no-requeue");  // after the job's own --requeue
  // Bare ALL, always (a login node's SBATCH_EXPORT must not decide): any
  // list makes sbatch ask slurmd for the user's login environment
  // (SLURM_GET_USER_ENV=1: a `su - user` per job and per array task, seconds
  // each, and the login shell's variables in the job), which the user's
  // own sbatch --export=ALL never does. skyslurm's values travel in sbatch's
  // environment instead (SbatchSubmitEnvironment); only a list of the job's
  // own gets them appended.
  std::string exports = spec.user_export.value_or("ALL");
  if (ExportListed(spec)) {
    // Bare: sbatch takes each value from its environment (where
    // SbatchSubmitEnvironment puts it), so none is in its arguments.
    for (const auto& [k, v] : spec.export_env) exports += "," + k;
  }
  options.push_back("--export=" + exports);
  return options;
}

Command SlurmBackend::SubmitCommand(const SubmitSpec& spec) const {
  Command c;
  c.argv = {"sbatch"};
  for (auto& o : SbatchSubmitOptions(spec)) c.argv.push_back(std::move(o));
  c.cwd = spec.submit_dir;
  // The environment sbatch runs with: this process's, or the one given,
  // exactly (what this process has beyond it is removed); either way plus
  // the values the job's --export takes from the submitter.
  if (spec.environment) {
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string_view entry(*e);
      const std::string name(entry.substr(0, entry.find('=')));
      // (SLURM_UMASK: the user's umask, which skyslurmd keeps for the
      // user's jobs while its own is 077.)
      if (!spec.environment->contains(name) && name != "SLURM_UMASK") c.env_unset.push_back(name);
    }
    for (const auto& [k, v] : *spec.environment) {
      // skyslurm's own hand-over marks must not reach the real sbatch.
      if (k == "SKYSLURM_PLUGIN_REEXEC" || k == "SKYSLURM_REAL_COMMAND_PID" ||
          k == "SKYSLURM_ANY_CLUSTER") {
        continue;
      }
      c.env_set.emplace_back(k, v);
    }
  }
  for (auto& kv : SbatchSubmitEnvironment(spec)) c.env_set.push_back(std::move(kv));
  return c;
}

Result<JobKey> SlurmBackend::SubmittedKey(const SubmitSpec& spec, const CommandOutput& out,
                                          std::chrono::milliseconds timeout) {
  const std::string id = Trim(out.out.substr(0, out.out.find_first_of(";\n")));
  if (id.empty() || !std::all_of(id.begin(), id.end(), ::isdigit)) {
    // sbatch succeeded without saying the id (an option silenced it): the
    // job is there, found by its tag; never report it as not submitted.
    SKY_ASSIGN_OR_RETURN(std::vector<JobInfo> found, JobsWithTag(spec.sky_id, timeout));
    if (!found.empty()) return found.front().key;
    return InternalError(
        fmt::format("{}: sbatch --parsable printed no job id: {}", name_, out.out));
  }
  return JobKey{name_, id};
}

Result<JobKey> SlurmBackend::Submit(const SubmitSpec& spec, std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  auto left = [&] { return deadline.left(); };
  // Idempotent: a job already carrying this sky id is the answer.
  if (!spec.first_attempt) {
    SKY_ASSIGN_OR_RETURN(std::vector<JobInfo> existing, JobsWithTag(spec.sky_id, left()));
    if (!existing.empty()) return existing.front().key;
  }

  Command c = SubmitCommand(spec);
  CommandOutput out;
  if (spec.job.script_args.empty()) {
    c.stdin_data = spec.job.script;
    SKY_ASSIGN_OR_RETURN(out, RunChecked(c, left(), /*utc=*/false));
  } else {
    // Script arguments need a script file: stage it there, submit, remove.
    SKY_ASSIGN_OR_RETURN(CommandOutput tmp,
                         RunChecked({.argv = {"mktemp", "-t", "skyslurm-job.XXXXXX"}}, left()));
    const std::string path = Trim(tmp.out);
    SKY_RETURN_IF_ERROR(RunChecked({.argv = {"sh", "-c", "cat > \"$1\"", "sh", path},
                                    .stdin_data = spec.job.script},
                                   left())
                            .status());
    c.argv.push_back(path);
    c.argv.insert(c.argv.end(), spec.job.script_args.begin(), spec.job.script_args.end());
    auto submitted = RunChecked(c, left(), /*utc=*/false);
    (void)RunChecked({.argv = {"rm", "-f", path}}, left());
    SKY_ASSIGN_OR_RETURN(out, std::move(submitted));
  }
  return SubmittedKey(spec, out, left());
}

Status SlurmBackend::Cancel(const std::string& job_id, bool only_if_pending,
                            std::chrono::milliseconds timeout) {
  Command c;
  c.argv = {"scancel"};
  if (only_if_pending) c.argv.push_back("--state=PENDING");
  c.argv.push_back(job_id);
  return RunChecked(c, timeout).status();
}

Result<CommandOutput> SlurmBackend::RunClientCommand(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& env,
    std::chrono::milliseconds timeout) {
  Command c{.argv = argv};
  c.env_set = env;
  // The user's own TZ (in `env`) prints the times, as their command would.
  Prepare(c, /*utc=*/false);
  c.timeout = timeout;
  return runner_.Run(c);
}

Status SlurmBackend::Hold(const std::string& job_id, std::chrono::milliseconds timeout) {
  return RunChecked({.argv = {"scontrol", "hold", job_id}}, timeout).status();
}

Status SlurmBackend::Release(const std::string& job_id, std::chrono::milliseconds timeout) {
  return RunChecked({.argv = {"scontrol", "release", job_id}}, timeout).status();
}

Status SlurmBackend::SetArrayThrottle(const std::string& job_id, std::int64_t limit,
                                      std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  auto updated = RunChecked({.argv = {"scontrol", "update", "JobId=" + job_id,
                                      fmt::format("ArrayTaskThrottle={}", limit)}},
                            timeout);
  if (updated.ok()) return OkStatus();
  // Refused for the array's ended records, it may still have set the limit
  // on every live one (array_throttle.h): the records decide.
  auto show = RunChecked({.argv = {"scontrol", "-o", "show", "job", job_id}}, deadline.left());
  if (show.ok() && LiveRecordsHaveThrottle(show->out, limit)) return OkStatus();
  return updated.status();
}

std::string StdOutPathOf(std::string_view line) {
  const auto at = line.find(" StdOut=");
  if (at == std::string_view::npos) return "";
  const std::string_view rest = line.substr(at + 8);
  // The next field: a space, a word of letters, '='.
  std::size_t end = rest.find('\n');
  if (end == std::string_view::npos) end = rest.size();
  for (std::size_t i = 0; i < end; ++i) {
    if (rest[i] != ' ') continue;
    std::size_t j = i + 1;
    while (j < end && std::isalpha(static_cast<unsigned char>(rest[j])) != 0) ++j;
    if (j > i + 1 && j < end && rest[j] == '=') {
      end = i;
      break;
    }
  }
  return std::string(rest.substr(0, end));
}

namespace {

// The job's output file, as scontrol says it.
Result<std::string> OutputPathOf(const std::string& cluster, const std::string& job_id,
                                 const CommandOutput& show) {
  std::string path = StdOutPathOf(show.out);
  if (path.empty())
    return NotFoundError(fmt::format("{}: job {} names no output file", cluster, job_id));
  return path;
}

}  // namespace

Result<std::string> SlurmBackend::Output(const std::string& job_id,
                                         std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  SKY_ASSIGN_OR_RETURN(CommandOutput show,
                       RunChecked({.argv = {"scontrol", "show", "job", "-o", job_id}}, timeout));
  SKY_ASSIGN_OR_RETURN(const std::string path, OutputPathOf(name_, job_id, show));
  SKY_ASSIGN_OR_RETURN(CommandOutput cat,
                       RunChecked({.argv = {"cat", "--", path}}, deadline.left()));
  return cat.out;
}

Result<Backend::OutputPart> SlurmBackend::OutputFrom(const std::string& job_id,
                                                     std::uint64_t offset, std::size_t max_bytes,
                                                     std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  SKY_ASSIGN_OR_RETURN(CommandOutput show,
                       RunChecked({.argv = {"scontrol", "show", "job", "-o", job_id}}, timeout));
  SKY_ASSIGN_OR_RETURN(const std::string path, OutputPathOf(name_, job_id, show));
  // Its size, a line of its own, then the part.
  SKY_ASSIGN_OR_RETURN(
      CommandOutput read,
      RunChecked(
          {.argv = {"sh", "-c", "wc -c <\"$1\" && tail -c +\"$2\" -- \"$1\" | head -c \"$3\"", "sh",
                    path, std::to_string(offset + 1), std::to_string(max_bytes)},
           .max_output_bytes = max_bytes + 64},
          deadline.left()));
  const auto eol = read.out.find('\n');
  OutputPart part;
  const std::string size_text = Trim(read.out.substr(0, eol));
  const auto [end, ec] =
      std::from_chars(size_text.data(), size_text.data() + size_text.size(), part.size);
  if (eol == std::string::npos || ec != std::errc() || end != size_text.data() + size_text.size()) {
    return InternalError(fmt::format("{}: reading {}: '{}'", name_, path, read.out.substr(0, 80)));
  }
  part.bytes = read.out.substr(eol + 1);
  return part;
}

Result<std::vector<cloud::NodeUse>> SlurmBackend::NodeUses(std::time_t since,
                                                           std::chrono::milliseconds timeout) {
  Command sacct{.argv = {"sacct"}};
  for (auto& a : SacctNodeUseArgs(since)) sacct.argv.push_back(a);
  SKY_ASSIGN_OR_RETURN(CommandOutput out, RunChecked(sacct, timeout));
  auto uses = ParseSacctNodeUses(out.out);
  if (!uses.ok()) return InternalError(fmt::format("{}: {}", name_, uses.status().message()));
  return uses;
}

Result<JobKey> SlurmBackend::SubmitThroughRest(const RestAccess& rest, const SubmitSpec& spec,
                                               std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  auto left = [&] { return deadline.left(); };
  // Idempotent, as through sbatch: a job already carrying this sky id is the answer.
  if (!spec.first_attempt) {
    SKY_ASSIGN_OR_RETURN(std::vector<JobInfo> existing, Jobs(left()));  // an array as one
    for (const JobInfo& j : existing) {
      if (j.sky_id == spec.sky_id && IsLive(j.phase)) return j.key;
    }
  }
  // sbatch is only ever asked when slurmrestd made no job: the look above
  // holds for it, and is not made a second time.
  SubmitSpec looked = spec;
  looked.first_attempt = true;
  auto via_sbatch = [&](const std::string& why) {
    trace::Span note(fmt::format("{}: through sbatch: {}", name(), why));
    return SlurmBackend::Submit(looked, left());
  };
  auto facts = rest.facts(spec, left());
  if (!facts.ok()) return via_sbatch(facts.status().message());
  // Asking what slurmrestd speaks submits nothing: when it could not be
  // asked, sbatch submits the job; when it answered with no version
  // skyslurm speaks, the cluster is ruled out (RestSpoken) and nothing is
  // submitted by another door.
  auto api = RestApi(rest, left());
  if (api.status().code() == StatusCode::kNotFound) {
    return FailedPreconditionError(api.status().message()).WithContext(name());
  }
  if (!api.ok()) return via_sbatch(api.status().message());
  auto body = RestSubmitBody(spec, *facts);
  if (!body.ok()) return via_sbatch(body.status().message());
  auto answer = rest.request("POST", *api + "/job/submit", *body, left());
  if (!answer.ok()) {
    // Not sent (slurmrestd cannot run there): sbatch, once. Sent but lost:
    // the job may exist, so the caller's retry looks for its tag first.
    if (rest.unavailable()) return via_sbatch(answer.status().message());
    return answer.status().WithContext(name());
  }
  auto id = RestSubmittedJobId(*answer);
  if (!id.ok()) {
    // No job was made: sbatch says the same refusal in its own words (or
    // takes what slurmrestd would not).
    return via_sbatch(id.status().message());
  }
  return JobKey{name(), *id};
}

Status SlurmBackend::CancelThroughRest(const RestAccess& rest, const std::string& job_id,
                                       bool only_if_pending, std::chrono::milliseconds timeout) {
  // slurmrestd's DELETE has no state filter: a cancel of a pending job only
  // (a move) stays scancel --state=PENDING, atomic in slurmctld. Its path
  // names one job or task: some tasks of an array ("23_[5,9-12]") go to
  // scancel too (slurmrestd: "Unable to parse URL path").
  if (only_if_pending || rest.unavailable() || job_id.find('[') != std::string::npos) {
    return SlurmBackend::Cancel(job_id, only_if_pending, timeout);
  }
  const Deadline deadline(timeout);
  auto api = RestApi(rest, timeout);
  if (!api.ok()) return SlurmBackend::Cancel(job_id, only_if_pending, deadline.left());
  auto answer = rest.request("DELETE", fmt::format("{}/job/{}", *api, job_id), "", deadline.left());
  if (!answer.ok()) {
    if (rest.unavailable()) return SlurmBackend::Cancel(job_id, only_if_pending, timeout);
    return answer.status().WithContext(name());
  }
  return RestAnswerOk(*answer).WithContext(name());
}

Result<std::string> SlurmBackend::RestApi(const RestAccess& rest,
                                          std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(rest_api_mu_);
  if (rest_api_) return *rest_api_;
  SKY_ASSIGN_OR_RETURN(ssh::HttpAnswer answer, rest.request("GET", "/openapi/v3", "", timeout));
  SKY_RETURN_IF_ERROR(RestAnswerOk(answer));
  auto offered = OfferedRestVersions(answer.body);
  if (!offered.ok()) return offered.status().WithContext(name());
  rest_api_ = ChooseRestApi(*offered);
  return *rest_api_;
}

Status SlurmBackend::RestSpoken(const RestAccess& rest, std::chrono::milliseconds timeout) {
  auto api = RestApi(rest, timeout);
  if (api.status().code() != StatusCode::kNotFound) return OkStatus();
  return FailedPreconditionError(api.status().message());
}

CheckAnswer SlurmBackend::NoKnownRestApi(const Status& why) {
  return {.verdict = "no known API",
          .access_note = "rest+",
          .detail = why.message() + " (drop 'access: rest' to reach it with its commands)"};
}

Result<std::string> SlurmBackend::PingRest(const RestAccess& rest,
                                           std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  SKY_ASSIGN_OR_RETURN(const std::string api, RestApi(rest, timeout));
  SKY_ASSIGN_OR_RETURN(ssh::HttpAnswer answer,
                       rest.request("GET", api + "/ping", "", deadline.left()));
  SKY_ASSIGN_OR_RETURN(const std::string release, RestRelease(answer));
  return fmt::format("{} (API {})", release, api.substr(api.rfind('/') + 1));
}

}  // namespace skyslurm::backend
