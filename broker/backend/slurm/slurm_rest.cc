#include "broker/backend/slurm/slurm_rest.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <json/json.h>

#include <algorithm>
#include <array>
#include <memory>
#include <utility>

#include "broker/backend/slurm/slurm_backend.h"
#include "broker/job/argv_parser.h"
#include "broker/job/directives.h"
#include "broker/job/option_table.h"
#include "broker/util/base64.h"
#include "broker/util/json_read.h"
#include "broker/util/strings.h"

namespace skyslurm::backend {
namespace {

// sbatch's long option -> slurmrestd's key (v0.0.38's job_params table, whose
// keys reach slurm_process_option_data: the same parser as sbatch's). Only
// options seen to work against a real slurmrestd; any other goes through
// sbatch. --parsable and --export are handled apart.
constexpr std::pair<std::string_view, std::string_view> kRestKeys[] = {
    {"account", "account"},
    {"acctg-freq", "account_gather_frequency"},
    {"array", "array"},
    {"batch", "batch_features"},
    {"begin", "begin_time"},
    {"chdir", "current_working_directory"},
    {"cluster-constraint", "cluster_constraint"},
    {"comment", "comment"},
    {"constraint", "constraints"},
    {"container", "container"},
    {"core-spec", "core_specification"},
    {"cores-per-socket", "cores_per_socket"},
    {"cpu-freq", "cpu_frequency"},
    {"cpus-per-gpu", "cpus_per_gpu"},
    {"cpus-per-task", "cpus_per_task"},
    {"deadline", "deadline"},
    {"delay-boot", "delay_boot"},
    {"dependency", "dependency"},
    {"distribution", "distribution"},
    {"error", "standard_error"},
    {"exclude", "exclude_nodes"},
    {"exclusive", "exclusive"},
    {"gpu-bind", "gpu_binding"},
    {"gpus", "gpus"},
    {"gpus-per-node", "gpus_per_node"},
    {"gpus-per-socket", "gpus_per_socket"},
    {"gpus-per-task", "gpus_per_task"},
    {"gres", "gres"},
    {"gres-flags", "gres_flags"},
    {"hint", "cpu_binding_hint"},
    {"hold", "hold"},
    {"input", "standard_input"},
    {"job-name", "name"},
    {"kill-on-invalid-dep", "kill_on_invalid_dependency"},
    {"licenses", "licenses"},
    {"mail-type", "mail_type"},
    {"mail-user", "mail_user"},
    {"mem", "memory_per_node"},
    {"mem-per-cpu", "memory_per_cpu"},
    {"mem-per-gpu", "memory_per_gpu"},
    {"mincpus", "minimum_cpus_per_node"},
    {"nice", "nice"},
    {"no-requeue", "no_requeue"},
    {"nodelist", "nodelist"},
    {"nodes", "nodes"},
    {"ntasks", "ntasks"},
    {"ntasks-per-gpu", "ntasks_per_gpu"},
    {"ntasks-per-node", "ntasks_per_node"},
    {"open-mode", "open_mode"},
    {"output", "standard_output"},
    {"partition", "partition"},
    {"qos", "qos"},
    {"requeue", "requeue"},
    {"reservation", "reservation"},
    {"signal", "signal"},
    {"threads-per-core", "threads_per_core"},
    {"time", "time_limit"},
    {"time-min", "time_minimum"},
};

std::string_view RestKey(std::string_view long_name) {
  for (const auto& [option, key] : kRestKeys) {
    if (option == long_name) return key;
  }
  return {};
}

std::string Compact(const Json::Value& v) {
  Json::StreamWriterBuilder b;
  b["indentation"] = "";
  b["emitUTF8"] = true;
  return Json::writeString(b, v);
}

Result<Json::Value> ParseBody(const ssh::HttpAnswer& answer) {
  Json::Value root;
  std::string errors;
  if (!ReadJson(answer.body, &root, &errors)) {
    return InternalError(fmt::format("slurmrestd answered {} with no JSON: {}", answer.status,
                                     answer.body.substr(0, 200)));
  }
  return root;
}

// "Job is in held state, pending scheduler release (2042)": errors that
// come with a job id are not failures.
std::string Errors(const Json::Value& root) {
  std::string out;
  for (const auto& e : root["errors"]) {
    if (!out.empty()) out += "; ";
    out += e["error"].asString();
    if (e.isMember("description") && !e["description"].asString().empty()) {
      out += ": " + e["description"].asString();
    }
    if (e["error_code"].asInt() != 0) out += fmt::format(" ({})", e["error_code"].asInt());
  }
  return out;
}

}  // namespace

Result<LoginFacts> ParseLoginFacts(std::string_view output) {
  LoginFacts facts;
  std::array<std::string*, 3> lines = {&facts.hostname, &facts.umask, &facts.home};
  for (std::string* line : lines) {
    const std::size_t eol = output.find('\n');
    if (eol == std::string_view::npos) {
      return InternalError("the login node's facts are cut short (hostname, umask, pwd, env)");
    }
    *line = std::string(output.substr(0, eol));
    output.remove_prefix(eol + 1);
  }
  const std::optional<std::string> decoded = Base64Decode(Trim(output));
  if (!decoded) {
    return InternalError("the login node's environment is not base64 (env -0 | base64)");
  }
  std::string_view env = *decoded;
  while (!env.empty()) {
    std::size_t end = env.find('\0');
    if (end == std::string_view::npos) end = env.size();
    const std::string_view entry = env.substr(0, end);
    const std::size_t eq = entry.find('=');
    if (eq != std::string_view::npos && eq > 0) {
      facts.environment[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
    }
    env.remove_prefix(std::min(env.size(), end + 1));
  }
  if (facts.hostname.empty() || facts.home.empty()) {
    return InternalError("the login node did not say its host name and folder");
  }
  return facts;
}

Result<std::string> RestSubmitBody(const SubmitSpec& spec, const LoginFacts& login) {
  if (!spec.job.script_args.empty()) {
    return FailedPreconditionError("the script has arguments (slurmrestd takes none)");
  }
  // sbatch reads the script's #SBATCH lines first, then its command line
  // (which wins); slurmrestd reads neither, so both become keys here (the
  // script's as its translation wrote them: TranslatedJob::script_options).
  if (spec.job.heterogeneous) return FailedPreconditionError("a heterogeneous job");
  std::vector<std::string> options = spec.job.script_options;
  for (std::string& o : SbatchSubmitOptions(spec)) options.push_back(std::move(o));
  // sbatch also takes options from SBATCH_* variables of its environment.
  for (const auto& [k, v] : login.environment) {
    if (k.starts_with("SBATCH_")) {
      return FailedPreconditionError(k + " is set on the login node (sbatch would read it)");
    }
  }
  for (const auto& [k, v] : spec.export_values) {
    if (k.starts_with("SBATCH_")) return FailedPreconditionError(k + " travels with the job");
  }
  const job::OptionTable& table = job::OptionTable(job::Tool::kSbatch);
  SKY_ASSIGN_OR_RETURN(job::ParsedArgs parsed,
                       job::ParseArgs(table, options, job::OperandPolicy::kReject, "submission"));
  Json::Value job(Json::objectValue);
  std::map<std::string, std::string> env = login.environment;
  for (const job::Occurrence& o : parsed.options) {
    if (o.spec == nullptr) {
      return FailedPreconditionError(
          fmt::format("--{} is a SPANK plugin's option (slurmrestd runs no plugins)", o.name));
    }
    const std::string_view name = o.spec->name;
    if (name == "parsable") continue;
    if (name == "export") {
      // --export=ALL[,NAME=value...]: the login node's environment plus those.
      const std::string value = o.value.value_or("");
      const std::vector<std::string> items = SplitList(value);
      if (items.empty() || items.front() != "ALL") {
        return FailedPreconditionError(
            fmt::format("--export={} (only ALL travels as data)", value));
      }
      for (std::size_t i = 1; i < items.size(); ++i) {
        // A bare NAME takes its value from sbatch's environment: the login
        // node's, or the submitter's (export_values, applied below).
        const std::size_t eq = items[i].find('=');
        if (eq != std::string::npos && eq > 0)
          env[items[i].substr(0, eq)] = items[i].substr(eq + 1);
      }
      continue;
    }
    const std::string_view key = RestKey(name);
    if (key.empty()) {
      return FailedPreconditionError(fmt::format("--{} has no slurmrestd key", name));
    }
    if (o.value) {
      job[std::string(key)] = *o.value;
    } else {
      job[std::string(key)] = true;  // a flag (--hold, --requeue, --exclusive)
    }
  }
  // Where sbatch would have run: the job's copied folder when it has one
  // (relative: under the home there), else the home.
  const std::string submit_dir = spec.submit_dir.empty() ? login.home
                                 : spec.submit_dir.starts_with("/")
                                     ? spec.submit_dir
                                     : login.home + "/" + spec.submit_dir;
  if (!job.isMember("current_working_directory")) job["current_working_directory"] = submit_dir;
  // What sbatch adds to the environment it sends (sbatch.c: the submit
  // folder and host, the umask); then the values --export names bare.
  // As through sbatch: a shim on that side must not route the job's own
  // commands again.
  env.erase("SKYSLURM_ANY_CLUSTER");
  env["SLURM_SUBMIT_DIR"] = submit_dir;
  env["SLURM_SUBMIT_HOST"] = login.hostname;
  if (!login.umask.empty()) env["SLURM_UMASK"] = login.umask;
  for (const auto& [k, v] : SbatchSubmitEnvironment(spec)) env[k] = v;
  Json::Value environment(Json::objectValue);
  for (const auto& [k, v] : env) environment[k] = v;
  job["environment"] = environment;
  Json::Value root(Json::objectValue);
  root["script"] = spec.job.script;
  root["job"] = job;
  return Compact(root);
}

Result<std::string> RestSubmittedJobId(const ssh::HttpAnswer& answer) {
  SKY_ASSIGN_OR_RETURN(Json::Value root, ParseBody(answer));
  const Json::Value& id = root["job_id"];
  if (id.isIntegral() && id.asInt64() > 0) return std::to_string(id.asInt64());
  std::string why = Errors(root);
  if (why.empty()) why = fmt::format("HTTP {}", answer.status);
  return UnavailableError("slurmrestd refused the job: " + why);
}

Status RestAnswerOk(const ssh::HttpAnswer& answer) {
  auto root = ParseBody(answer);
  if (!root.ok()) return root.status();
  const std::string why = Errors(*root);
  if (answer.status / 100 == 2 && why.empty()) return OkStatus();
  return UnavailableError(
      fmt::format("slurmrestd: {}", why.empty() ? fmt::format("HTTP {}", answer.status) : why));
}

Result<std::vector<std::string>> OfferedRestVersions(std::string_view openapi_json) {
  Json::Value root;
  std::string errors;
  if (!ReadJson(openapi_json, &root, &errors, /*strict_root=*/true) || !root.isObject() ||
      !root["paths"].isObject()) {
    return InvalidArgumentError("slurmrestd's /openapi/v3 is no OpenAPI document with paths");
  }
  std::vector<std::string> versions;
  for (const std::string& path : root["paths"].getMemberNames()) {
    constexpr std::string_view kPrefix = "/slurm/";
    if (!path.starts_with(kPrefix)) continue;
    const auto end = path.find('/', kPrefix.size());
    if (end == std::string::npos) continue;
    std::string version = path.substr(kPrefix.size(), end - kPrefix.size());
    if (std::find(versions.begin(), versions.end(), version) == versions.end()) {
      versions.push_back(std::move(version));
    }
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

Result<std::string> ChooseRestApi(const std::vector<std::string>& offered) {
  for (auto it = std::rbegin(kRestVersionsSpoken); it != std::rend(kRestVersionsSpoken); ++it) {
    if (std::find(offered.begin(), offered.end(), *it) != offered.end()) {
      return "/slurm/" + std::string(*it);
    }
  }
  std::vector<std::string> spoken(std::begin(kRestVersionsSpoken), std::end(kRestVersionsSpoken));
  return NotFoundError(fmt::format(
      "slurmrestd offers OpenAPI {}, none that skyslurm speaks ({}): access: rest cannot submit "
      "here",
      offered.empty() ? std::string("(no /slurm/ paths)")
                      : fmt::format("{}", fmt::join(offered, ", ")),
      fmt::join(spoken, ", ")));
}

Result<std::string> RestRelease(const ssh::HttpAnswer& answer) {
  SKY_RETURN_IF_ERROR(RestAnswerOk(answer));
  SKY_ASSIGN_OR_RETURN(Json::Value root, ParseBody(answer));
  // 22.05: meta.Slurm; 23.02 on: meta.slurm.
  const Json::Value& meta = root["meta"];
  const std::string release = meta["slurm"]["release"].isString()
                                  ? meta["slurm"]["release"].asString()
                                  : meta["Slurm"]["release"].asString();
  if (release.empty()) return InternalError("slurmrestd's ping names no Slurm release");
  return release;
}

}  // namespace skyslurm::backend
