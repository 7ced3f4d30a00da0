// TranslateJobUpdate and ApplyJobUpdate (job_update.h).
#include "broker/job/job_update.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "broker/job/argv_parser.h"
#include "broker/job/option_table.h"

namespace skyslurm::job {
namespace {

// scontrol's job fields (its man page, "SPECIFICATIONS FOR UPDATE COMMAND,
// JOBS") that mean the same on every cluster, and the sbatch option each is.
// `also` names options the new one excludes (--mem and --mem-per-cpu).
struct Carried {
  std::string_view field;  // lower case
  std::string_view option;
  std::array<std::string_view, 2> also{};
};
constexpr Carried kCarried[] = {
    {"timelimit", "time"},
    {"timemin", "time-min"},
    {"name", "job-name"},
    {"jobname", "job-name"},
    {"comment", "comment"},
    {"nice", "nice"},
    {"deadline", "deadline"},
    {"starttime", "begin"},
    {"eligibletime", "begin"},
    {"features", "constraint"},
    {"gres", "gres"},
    {"licenses", "licenses"},
    {"mailtype", "mail-type"},
    {"mailuser", "mail-user"},
    {"mincpusnode", "mincpus"},
    {"minmemorynode", "mem", {"mem-per-cpu", "mem-per-gpu"}},
    {"minmemorycpu", "mem-per-cpu", {"mem", "mem-per-gpu"}},
    {"mintmpdisknode", "tmp"},
    {"numnodes", "nodes"},
    {"numtasks", "ntasks"},
    {"taskspernode", "ntasks-per-node"},
    {"cpuspertask", "cpus-per-task"},
    {"wckey", "wckey"},
    {"workdir", "chdir"},
    {"stdout", "output"},
    {"stderr", "error"},
};

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

JobUpdate TranslateJobUpdate(const std::vector<std::string>& words) {
  JobUpdate update;
  for (const std::string& word : words) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) continue;
    const std::string field = Lower(std::string_view(word).substr(0, eq));
    const std::string value = word.substr(eq + 1);
    if (field == "jobid" || field == "job") continue;
    auto set = [&](std::string_view option, std::array<std::string_view, 2> also) {
      // An empty value clears the field: the option goes, nothing replaces it.
      for (std::string_view name : {option, also[0], also[1]}) {
        if (!name.empty()) update.names.emplace_back(name);
      }
      if (!value.empty()) update.options.push_back("--" + std::string(option) + "=" + value);
    };
    if (field == "requeue" && (value == "0" || value == "1")) {  // a flag pair, no value
      update.names.insert(update.names.end(), {"requeue", "no-requeue"});
      update.options.push_back(value == "1" ? "--requeue" : "--no-requeue");
      continue;
    }
    const auto carried = std::find_if(std::begin(kCarried), std::end(kCarried),
                                      [&](const Carried& c) { return c.field == field; });
    // TimeLimit=+30 adds to the limit the job has there; the sum is that
    // cluster's to know.
    const bool relative =
        field == "timelimit" && (value.starts_with('+') || value.starts_with('-'));
    if (carried == std::end(kCarried) || relative) {
      update.binding.push_back(word);
      continue;
    }
    set(carried->option, carried->also);
  }
  return update;
}

std::vector<std::string> ApplyJobUpdate(const std::vector<std::string>& sbatch_args,
                                        const JobUpdate& update, const std::string& bind_to) {
  const OptionTable table(Tool::kSbatch);
  const std::vector<std::string> kept =
      RemoveOptionsIf(table, sbatch_args, [&](const Occurrence& o) {
        const std::string_view name = o.spec != nullptr ? o.spec->name : o.name;
        if (!bind_to.empty() && name == "sky-infra") return true;
        return std::find(update.names.begin(), update.names.end(), name) != update.names.end();
      });
  std::vector<std::string> out;
  if (!bind_to.empty()) out.push_back("--sky-infra=" + bind_to);
  out.insert(out.end(), update.options.begin(), update.options.end());
  out.insert(out.end(), kept.begin(), kept.end());
  return out;
}

}  // namespace skyslurm::job
