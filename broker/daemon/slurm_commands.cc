// JobManager::RunClientCommand (slurm_commands.h): which cluster holds each
// job named, each cluster's command, and the outputs merged.
#include "broker/daemon/slurm_commands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ctime>
#include <future>
#include <mutex>
#include <optional>
#include <set>

#include "broker/daemon/job_manager.h"
#include "broker/daemon/slurm_json.h"
#include "broker/daemon/slurm_text.h"
#include "broker/daemon/slurm_yaml.h"
#include "broker/job/client_command.h"
#include "broker/job/global_id.h"
#include "broker/job/job_update.h"

namespace skyslurm::daemon {
namespace {

// The user's variables that shape what the commands print (their time
// zone, time format, sort order...), never one that says which cluster.
std::vector<std::pair<std::string, std::string>> Forwarded(
    const std::map<std::string, std::string>& env) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : env) {
    const bool shapes = name == "TZ" || name == "LANG" || name.starts_with("LC_") ||
                        name == "SLURM_TIME_FORMAT" || name.starts_with("SQUEUE_") ||
                        name.starts_with("SACCT_") || name.starts_with("SCANCEL_") ||
                        name.starts_with("SCONTROL_");
    if (shapes && name != "SQUEUE_FORMAT" && name != "SQUEUE_FORMAT2")
      out.emplace_back(name, value);
  }
  return out;
}

// A word with -l/--long ("-l", "--long", "-Xl") without it: "", "-X".
std::string WithoutLongOption(const std::string& word) {
  if (word == "-l" || word == "--long") return "";
  std::string rest = word;
  rest.erase(rest.find('l'), 1);  // the first l of a bundle is the option
  return rest == "-" ? "" : rest;
}

// squeue -l's first line: the time it lists ("Sun Dec 06 19:54:06 2026").
std::string SqueueDateLine(std::time_t now) {
  std::tm local{};
  localtime_r(&now, &local);
  char text[64];
  const std::size_t n = std::strftime(text, sizeof text, "%a %b %d %H:%M:%S %Y\n", &local);
  return std::string(text, n);
}

// One cluster's share of the command.
struct Run {
  std::string cluster;
  std::vector<std::string> ids;  // its own ids to name ("" list: none named)
  IdMap map;                     // its ids -> the global ids shown
  Unsettled unsettled;           // its ids of routed jobs skyslurmd has not seen end
  bool widened = false;          // squeue: --states=all added to find them
  std::vector<std::string> argv;
  Result<CommandOutput> result = UnavailableError("not run");
};

}  // namespace

ClientCommandAnswer JobManager::RunClientCommand(const std::string& tool_name,
                                                 const std::vector<std::string>& args,
                                                 const std::map<std::string, std::string>& env) {
  ClientCommandAnswer answer;
  const auto tool = ClientToolNamed(tool_name);
  const std::string home = ws_.home();
  const auto cmd = tool ? ParseClientCommand(*tool, args) : std::nullopt;
  const auto forwarded = Forwarded(env);
  auto run_here = [&](std::vector<std::string> argv) {
    backend::Backend* b = BackendOf(home);
    if (b == nullptr)
      return ClientCommandAnswer{"", tool_name + ": error: skyslurm: no home cluster\n", 1};
    auto r = b->RunClientCommand(argv, forwarded, options_.submit_timeout);
    if (!r.ok())
      return ClientCommandAnswer{
          "", tool_name + ": error: skyslurm: " + r.status().message() + "\n", 1};
    return ClientCommandAnswer{r->out, r->err, r->term_signal != 0 ? 1 : r->exit_code};
  };
  std::vector<std::string> as_typed = {tool_name};
  as_typed.insert(as_typed.end(), args.begin(), args.end());
  // As typed: the real command decides.
  if (!cmd || cmd->about) return run_here(as_typed);
  // -M/--clusters (sacct's -L too) naming no job: the home's command asks
  // those clusters (Slurm's multi-cluster mode, through the slurmdbd they
  // share); squeue prints a section for each (-l, -s too), sacct one table
  // (-l as its fields), and the routed jobs in them get their global ids (a
  // section's, or a line's by its Cluster field, which sacct is asked for
  // at the end and which is then removed). With ids named or
  // --json/--yaml: as typed.
  const bool sections = cmd->clusters && *tool == ClientTool::kSqueue;
  const bool by_cluster = cmd->clusters && *tool == ClientTool::kSacct;
  if (ClustersAsTyped(*cmd)) return run_here(as_typed);
  // --yaml (squeue, sacct): the clusters are asked for --json, and the one
  // document merged is written as Slurm's YAML (slurm_yaml.h).
  const bool yaml = !cmd->yaml_words.empty() && !cmd->json &&
                    (*tool == ClientTool::kSqueue || *tool == ClientTool::kSacct);

  // scontrol update of routed jobs: each job (then its parts) locked from
  // before its copies are read until the update is carried into its input
  // (CarryUpdate), so that no move in between submits a copy without it.
  const bool scontrol_update = *tool == ClientTool::kScontrol && cmd->verb == "update";
  std::vector<std::string> updated;  // their sky ids
  std::vector<std::unique_lock<std::mutex>> update_locks;
  if (scontrol_update) {
    for (const std::string& id : cmd->ids) {
      if (!IsGlobalIdWord(id)) continue;
      if (auto job = store_.GetByGlobalId(SplitJobIdWord(id)->number); job.ok()) {
        updated.push_back(job->sky_id);
      }
    }
    std::ranges::sort(updated);
    updated.erase(std::unique(updated.begin(), updated.end()), updated.end());
    // The whole before its parts, as the daemon's own look takes them.
    for (const std::string& sky_id : updated) {
      update_locks.emplace_back(LockFor(sky_id));
      for (const auto& part : store_.Parts(sky_id).value_or({})) {
        update_locks.emplace_back(LockFor(part.sky_id));
      }
    }
  }

  // Which cluster holds each job named; a listing's routed jobs.
  std::map<std::string, Run> runs;
  auto run_of = [&](const std::string& cluster) -> Run& {
    Run& r = runs[cluster];
    r.cluster = cluster;
    return r;
  };
  std::vector<std::string> routed_sky_ids;  // scancel: the sky jobs to cancel
  auto add_job = [&](const store::SkyJob& job, const std::string& suffix, bool named) {
    std::vector<store::SkyJob> copies;
    if (auto parts = store_.Parts(job.sky_id); parts.ok() && !parts->empty()) {
      copies = *parts;
    } else {
      copies.push_back(job);
    }
    for (const auto& c : copies) {
      if (c.native_id.empty() || c.cluster.empty()) continue;
      Run& r = run_of(c.cluster);
      r.map[c.native_id] = job.global_id;
      if (!store::IsFinalState(c.state)) r.unsettled.insert(c.native_id);
      if (named) r.ids.push_back(c.native_id + suffix);
    }
  };
  const bool listing = cmd->ids.empty();
  for (const std::string& id : cmd->ids) {
    if (!IsGlobalIdWord(id)) {
      run_of(home).ids.push_back(id);
      continue;
    }
    const JobIdWord word = *SplitJobIdWord(id);
    if (auto job = store_.GetByGlobalId(word.number); job.ok()) {
      add_job(*job, word.rest, true);
      routed_sky_ids.push_back(job->sky_id + word.rest);
    } else if (auto named = DecodeGlobalIdOf(word.number)) {
      Run& r = run_of(named->first);
      r.map[named->second] = word.number;
      r.ids.push_back(named->second + word.rest);
      routed_sky_ids.push_back(named->first + ":" + named->second + word.rest);
    } else {
      run_of(home).ids.push_back(id);  // no cluster of ours: the home's command says so
    }
  }
  if (listing) {
    if (*tool != ClientTool::kSqueue && *tool != ClientTool::kSacct) return run_here(as_typed);
    run_of(home);  // the home's own listing, as typed
    // sacct lists today's jobs unless told otherwise (-S narrows the
    // peers' too); squeue the jobs still in the queues.
    std::time_t since = 0;
    if (*tool == ClientTool::kSacct && !cmd->window) {
      std::time_t now = Now();
      std::tm local{};
      localtime_r(&now, &local);
      local.tm_hour = local.tm_min = local.tm_sec = 0;
      since = std::mktime(&local);
    }
    for (const auto& job : store_.List(*tool == ClientTool::kSqueue).value_or({})) {
      if (job.global_id == 0 || !job.parent.empty()) continue;
      if (*tool == ClientTool::kSacct && job.created < since) continue;
      // The home's own listing has the jobs there; the peers are asked for theirs.
      add_job(job, "", true);
    }
    runs[home].ids.clear();
  }

  // scancel of routed jobs with nothing but their ids: skyslurmd cancels
  // them (every copy, and no move makes another).
  if (*tool == ClientTool::kScancel && cmd->id_words.size() == args.size()) {
    Status all = OkStatus();
    for (const auto& id : routed_sky_ids) {
      // A job that has ended is no error, as Slurm's scancel is silent for a
      // job already done (a workflow engine cancels all it started on Ctrl-C).
      Status st = Cancel(id);
      if (!st.ok() && st.code() != StatusCode::kFailedPrecondition && all.ok()) all = st;
    }
    if (!all.ok()) {
      answer.err += fmt::format("scancel: error: {}\n", all.message());
      answer.exit_code = 1;
    }
    if (runs.contains(home) && !runs[home].ids.empty()) {
      std::vector<std::string> argv = {"scancel"};
      argv.insert(argv.end(), runs[home].ids.begin(), runs[home].ids.end());
      const ClientCommandAnswer h = run_here(argv);
      answer.out += h.out;
      answer.err += h.err;
      answer.exit_code = std::max(answer.exit_code, h.exit_code);
    }
    return answer;
  }

  // Each cluster's command: the user's options, its own ids in place of those named.
  std::set<std::size_t> dropped;
  for (const auto& w : cmd->id_words) {
    dropped.insert(w.index);
    dropped.insert(w.option);
  }
  std::string format;
  bool marked = false;                       // -o (or SQUEUE_FORMAT, or squeue's default)
  std::optional<MarkedSqueueFields> fields;  // -O (or SQUEUE_FORMAT2)
  // -s with -O (or SQUEUE_FORMAT2): steps' fields, printed as they are.
  const bool step_fields =
      cmd->steps && (cmd->field_format || (cmd->format.empty() && env.contains("SQUEUE_FORMAT2")));
  if (*tool == ClientTool::kSqueue && !cmd->structured && !step_fields) {
    if (cmd->field_format) {
      if (!cmd->field_format_spec.empty()) fields = MarkSqueueFields(cmd->field_format_spec);
    } else {
      format = cmd->format;
      if (format.empty()) {
        if (auto f = env.find("SQUEUE_FORMAT"); f != env.end()) format = f->second;
      }
      const auto field_env = env.find("SQUEUE_FORMAT2");
      if (field_env != env.end() && cmd->format.empty()) {
        fields = MarkSqueueFields(field_env->second);
      } else {
        if (format.empty()) format = SqueueDefaultFormat(cmd->long_format, cmd->steps);
        marked = true;
      }
    }
    if (marked || fields) {
      for (const std::size_t i : cmd->format_words) dropped.insert(i);
    }
  }
  // One table of every cluster's lines, one header (a -M section has its own).
  std::string sacct_format;  // sacct -M: the user's fields, then Cluster
  if (by_cluster) {
    sacct_format = cmd->format;
    if (auto f = env.find("SACCT_FORMAT"); sacct_format.empty() && f != env.end()) {
      sacct_format = f->second;
    }
    if (sacct_format.empty()) {
      sacct_format = cmd->long_format ? std::string(kSacctLongFormat) : kSacctDefaultFormat;
    }
    sacct_format += cmd->parsable ? ",Cluster" : fmt::format(",Cluster%{}", kSacctClusterWidth);
    for (const std::size_t i : cmd->format_words) dropped.insert(i);
  }
  // -l with the format given in its place: the word without it (-l and -o
  // exclude each other); squeue's date line printed here.
  const bool without_long =
      cmd->long_format && (by_cluster || (*tool == ClientTool::kSqueue && (marked || fields)));
  std::map<std::size_t, std::string> rewritten;  // word index -> what is passed instead
  if (without_long) {
    for (const std::size_t i : cmd->long_words) rewritten[i] = WithoutLongOption(args[i]);
  }
  // squeue -M -h: asked with headers (the sections say whose each line is).
  const bool bare_sections = sections && cmd->noheader && (marked || fields);
  if (bare_sections) {
    for (const std::size_t i : cmd->noheader_words) dropped.insert(i);
  }
  const bool table = !sections && ((*tool == ClientTool::kSqueue && (marked || fields)) ||
                                   (*tool == ClientTool::kSacct && !cmd->structured));
  if (table) {
    for (const std::size_t i : cmd->noheader_words) dropped.insert(i);
  }
  // -M: each cluster's routed jobs; the home's command asks them all.
  std::map<std::string, IdMap, std::less<>> section_maps;
  std::map<std::string, Unsettled, std::less<>> section_unsettled;
  for (auto& [cluster, r] : runs) {
    if (!listing && r.ids.empty()) continue;
    if (cmd->clusters) {
      section_maps[cluster] = r.map;
      section_unsettled[cluster] = r.unsettled;
      if (cluster != home) continue;
    }
    r.argv = {tool_name};
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (yaml && std::ranges::find(cmd->yaml_words, i) != cmd->yaml_words.end()) {
        r.argv.push_back("--json" + args[i].substr(std::string_view("--yaml").size()));
      } else if (auto w = rewritten.find(i); w != rewritten.end()) {
        if (!w->second.empty()) r.argv.push_back(w->second);
      } else if (!dropped.contains(i)) {
        r.argv.push_back(args[i]);
      } else if (scontrol_update && i == cmd->id_words.front().index) {
        r.argv.push_back(args[i].substr(0, cmd->id_words.front().prefix) +
                         fmt::format("{}", fmt::join(r.ids, ",")));
      }
    }
    // Each line's job and state, to show an unsettled job's end as CG.
    const bool track = marked && !cmd->steps && !sections;
    if (marked) r.argv.push_back("--format=" + MarkSqueueFormat(format, cmd->steps, track));
    if (fields) r.argv.push_back("--Format=" + fields->format);
    if (by_cluster) r.argv.push_back("--format=" + sacct_format);
    const bool home_listing = listing && cluster == home;
    // A job that ended there is left out by squeue's default states: asked
    // for all, the ended lines of other jobs dropped again (SqueueHold).
    if (track && !home_listing && !cmd->states && !r.unsettled.empty()) {
      r.argv.push_back("--states=all");
      r.widened = true;
    }
    if (!home_listing && !scontrol_update) {
      if (*tool == ClientTool::kSqueue || *tool == ClientTool::kSacct) {
        r.argv.push_back(fmt::format("--jobs={}", fmt::join(r.ids, ",")));
      } else {
        r.argv.insert(r.argv.end(), r.ids.begin(), r.ids.end());
      }
    }
  }
  // Side by side: a peer's command costs a round trip.
  std::vector<std::future<void>> pending;
  for (auto& [cluster, r] : runs) {
    if (r.argv.empty()) continue;
    backend::Backend* b = BackendOf(cluster);
    if (b == nullptr) {
      r.result = NotFoundError(fmt::format("no cluster named {}", cluster));
      continue;
    }
    pending.push_back(std::async(std::launch::async, [&r, b, &forwarded, this] {
      r.result = b->RunClientCommand(r.argv, forwarded, options_.submit_timeout);
    }));
  }
  for (auto& p : pending) p.get();

  if (scontrol_update && !updated.empty()) {
    std::set<std::string> done;  // the clusters whose scontrol took the update
    for (const auto& [cluster, r] : runs) {
      if (r.result.ok() && r.result->exit_code == 0 && r.result->term_signal == 0) {
        done.insert(cluster);
      }
    }
    std::vector<std::string> words;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i != cmd->id_words.front().index && args[i].find('=') != std::string::npos &&
          !args[i].starts_with('-')) {
        words.push_back(args[i]);
      }
    }
    for (const std::string& sky_id : updated) CarryUpdate(sky_id, words, done);
  }

  // Merged: the home's first, then the others by name; one header.
  std::vector<Run*> order;
  if (runs.contains(home)) order.push_back(&runs[home]);
  for (auto& [cluster, r] : runs) {
    if (cluster != home) order.push_back(&r);
  }
  if ((cmd->json || yaml) && (*tool == ClientTool::kSqueue || *tool == ClientTool::kSacct)) {
    // One document, as one cluster's command prints it.
    std::vector<JsonPart> parts;
    int worst = 0;
    bool any_ok = false;
    for (Run* r : order) {
      if (r->argv.empty()) continue;
      if (!r->result.ok()) {
        answer.err += fmt::format("{}: error: skyslurm: {}: {}\n", tool_name, r->cluster,
                                  r->result.status().message());
        worst = std::max(worst, 1);
        continue;
      }
      parts.push_back({r->result->out, &r->map, &r->unsettled});
      answer.err += r->result->err;
      const int code = r->result->term_signal != 0 ? 1 : r->result->exit_code;
      if (code == 0) any_ok = true;
      worst = std::max(worst, code);
    }
    auto merged = MergeJobsJson(parts);
    if (!merged.ok()) {
      // Not the JSON expected: what each printed, as it is.
      for (const auto& p : parts) answer.out += p.text;
      answer.err +=
          fmt::format("{}: error: skyslurm: the clusters' --json could not be merged: {}\n",
                      tool_name, merged.status().message());
      answer.exit_code = std::max(worst, 1);
      return answer;
    }
    answer.out = *merged;
    if (yaml && !merged->empty()) {
      auto written = SlurmYamlFromJson(
          *merged, *tool == ClientTool::kSqueue ? EmptyString::kNull : EmptyString::kEmpty);
      if (!written.ok()) {
        answer.err += fmt::format("{}: error: skyslurm: the clusters' --yaml: {}\n", tool_name,
                                  written.status().message());
        answer.exit_code = std::max(worst, 1);
        return answer;
      }
      answer.out = *written;
    }
    answer.exit_code = any_ok ? 0 : worst;
    return answer;
  }
  const int header_lines = *tool == ClientTool::kSacct && !cmd->parsable ? 2 : 1;
  bool header_written = false, any_ok = false;
  int worst = 0;
  for (Run* r : order) {
    if (r->argv.empty()) continue;
    if (!r->result.ok()) {
      answer.err += fmt::format("{}: error: skyslurm: {}: {}\n", tool_name, r->cluster,
                                r->result.status().message());
      worst = std::max(worst, 1);
      continue;
    }
    const CommandOutput& o = *r->result;
    std::string text = o.out;
    if (*tool == ClientTool::kSqueue && (marked || fields)) {
      auto unmark = [&](std::string_view part, const IdMap& map) {
        return marked ? UnmarkSqueueOutput(part, map) : UnmarkSqueueFields(part, *fields, map);
      };
      const SqueueHold hold{&r->unsettled, r->widened};
      text = sections ? MapClusterSections(text, section_maps, unmark)
             : marked ? UnmarkSqueueOutput(text, r->map, &hold)
                      : unmark(text, r->map);
      if (bare_sections) {
        const bool own_layout = marked && cmd->format.empty() && !env.contains("SQUEUE_FORMAT");
        text = SectionsWithoutHeaders(text, own_layout && !cmd->steps);
      }
    } else if (by_cluster) {
      text = MapSacctByCluster(text, cmd->parsable, section_maps, section_unsettled);
    } else if (*tool == ClientTool::kSacct && !cmd->structured) {
      const bool all_unsettled =
          !r->ids.empty() && std::ranges::all_of(r->ids, [&](const std::string& id) {
            return r->unsettled.contains(id);
          });
      text = MapSacctOutput(text, cmd->parsable, r->map, r->unsettled, all_unsettled);
    } else if (*tool == ClientTool::kScontrol || *tool == ClientTool::kScancel) {
      text = MapScontrolOutput(text, r->map, r->unsettled);
    }
    if (table) {
      // Every cluster's command printed its header; the user sees one, or none (-h/-n).
      if (header_written || cmd->noheader) {
        text = DropLines(text, header_lines);
      } else if (!text.empty()) {
        header_written = true;
      }
    }
    answer.out += text;
    answer.err += MapScontrolOutput(o.err, r->map);
    const int code = o.term_signal != 0 ? 1 : o.exit_code;
    if (code == 0) any_ok = true;
    worst = std::max(worst, code);
  }
  if (without_long && *tool == ClientTool::kSqueue && !cmd->noheader && !answer.out.empty()) {
    answer.out = SqueueDateLine(Now()) + answer.out;
  }
  // squeue and sacct name several jobs and print those they find: one
  // cluster's "no such job" is not the command's failure while another
  // printed its job. scontrol and scancel fail for any job that failed.
  answer.exit_code = (table && any_ok) ? 0 : worst;
  return answer;
}

void JobManager::CarryUpdate(const std::string& sky_id,
                             const std::vector<std::string>& update_words,
                             const std::set<std::string>& done) {
  const job::JobUpdate update = job::TranslateJobUpdate(update_words);
  if (update.empty()) return;
  auto whole = store_.Get(sky_id);
  if (!whole.ok()) return;
  const std::string typed = fmt::format("scontrol update {}", fmt::join(update_words, " "));
  auto carry = [&](store::SkyJob& job, const job::JobUpdate& u, const std::string& bind_to) {
    auto input = JobInputFromText(job.input_json);
    if (!input.ok()) return;
    input->args = job::ApplyJobUpdate(input->args, u, bind_to);
    job.input_json = JobInputText(*input);
    std::string detail = typed;
    if (!u.options.empty()) {
      detail += fmt::format(": its later copies are submitted with {}", fmt::join(u.options, " "));
    }
    if (!bind_to.empty()) {
      detail +=
          fmt::format("{} {} is {}'s own, so it stays there (--sky-infra={})",
                      u.options.empty() ? ":" : ";", fmt::join(u.binding, " "), bind_to, bind_to);
    }
    (void)Record(job, EventKind::kUpdated, detail, job.cluster, job.native_id);
  };
  auto parts = store_.Parts(sky_id).value_or({});
  if (parts.empty()) {
    if (store::IsFinalState(whole->state) || !done.contains(whole->cluster)) return;
    carry(*whole, update, update.binding.empty() ? "" : whole->cluster);
    return;
  }
  // A spread array: each part as a job; the whole (its pending tasks that
  // move are submitted from its input) takes what means the same anywhere.
  bool any = false;
  for (auto& part : parts) {
    if (store::IsFinalState(part.state) || !done.contains(part.cluster)) continue;
    carry(part, update, update.binding.empty() ? "" : part.cluster);
    any = true;
  }
  job::JobUpdate portable = update;
  portable.binding.clear();
  if (any && !portable.empty()) carry(*whole, portable, "");
}

}  // namespace skyslurm::daemon
