// SlurmFront (slurm_front.h): which cluster holds each job named, each
// cluster's command, and the outputs merged.
#include "broker/daemon/slurm_front/slurm_front.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ctime>
#include <future>
#include <mutex>
#include <optional>
#include <set>

#include "broker/daemon/jobs/job_manager.h"
#include "broker/daemon/slurm_front/slurm_json.h"
#include "broker/daemon/slurm_front/slurm_text.h"
#include "broker/daemon/slurm_front/slurm_yaml.h"
#include "broker/job/client_command.h"
#include "broker/job/global_id.h"
#include "broker/job/job_update.h"
#include "broker/util/acting_user.h"

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

// The clusters' exit codes: the worst, and whether any succeeded.
struct ExitTally {
  int worst = 0;
  bool any_ok = false;
  void Add(int code) {
    any_ok = any_ok || code == 0;
    worst = std::max(worst, code);
  }
};

// One command's run: which cluster holds each job it names, each cluster's
// command, and the outputs merged.
class Invocation {
 public:
  Invocation(JobManager& manager, const std::string& tool_name,
             const std::vector<std::string>& args, const std::map<std::string, std::string>& env)
      : m_(manager),
        tool_name_(tool_name),
        args_(args),
        env_(env),
        tool_(ClientToolNamed(tool_name)),
        cmd_(tool_ ? ParseClientCommand(*tool_, args) : std::nullopt),
        forwarded_(Forwarded(env)),
        home_(manager.home()) {}

  ClientCommandAnswer Answer();

 private:
  ClientCommandAnswer RunHere(std::vector<std::string> argv);
  Run& RunOf(const std::string& cluster);
  void LockUpdated();
  void AddJob(const store::SkyJob& job, const std::string& suffix, bool named);
  // The clusters holding the jobs named (or listed); false: the command
  // lists what only the home's command knows (as typed there).
  bool FindJobs();
  ClientCommandAnswer CancelRouted();
  void ArrangeFormats();
  void WriteArgv();
  void RunEach();
  void CarryUpdates();
  std::vector<Run*> Order();
  ClientCommandAnswer MergeDocuments();
  ClientCommandAnswer MergeText();
  // The output of a run that ran (its exit code tallied); nullptr for one
  // that could not, its error said in `err` (counted as exit code 1).
  const CommandOutput* Ran(const Run& r, ExitTally& tally, std::string& err) const;

  JobManager& m_;
  const std::string& tool_name_;
  const std::vector<std::string>& args_;
  const std::map<std::string, std::string>& env_;
  const std::optional<ClientTool> tool_;
  const std::optional<ClientCommand> cmd_;
  const std::vector<std::pair<std::string, std::string>> forwarded_;
  const std::string home_;
  bool sections_ = false, by_cluster_ = false, yaml_ = false, scontrol_update_ = false;
  bool listing_ = false;
  std::vector<std::string> updated_;  // scontrol update: the routed jobs' sky ids
  std::vector<std::unique_lock<std::mutex>> update_locks_;
  std::map<std::string, Run> runs_;
  std::vector<std::string> routed_sky_ids_;  // scancel: the sky jobs to cancel
  // How each cluster's command is written: the words dropped or rewritten,
  // and the format asked for in their place.
  std::set<std::size_t> dropped_;
  std::string format_;
  bool marked_ = false;                       // -o (or SQUEUE_FORMAT, or squeue's default)
  std::optional<MarkedSqueueFields> fields_;  // -O (or SQUEUE_FORMAT2)
  std::string sacct_format_;                  // sacct -M: the user's fields, then Cluster
  bool without_long_ = false;
  std::map<std::size_t, std::string> rewritten_;  // word index -> what is passed instead
  bool bare_sections_ = false, table_ = false;
  std::map<std::string, IdMap, std::less<>> section_maps_;
  std::map<std::string, Unsettled, std::less<>> section_unsettled_;
};

ClientCommandAnswer Invocation::RunHere(std::vector<std::string> argv) {
  backend::Backend* b = m_.BackendOf(home_);
  if (b == nullptr) {
    return ClientCommandAnswer{"", tool_name_ + ": error: skyslurm: no home cluster\n", 1};
  }
  auto r = b->RunClientCommand(argv, forwarded_, m_.submit_timeout());
  if (!r.ok()) {
    return ClientCommandAnswer{"", tool_name_ + ": error: skyslurm: " + r.status().message() + "\n",
                               1};
  }
  return ClientCommandAnswer{r->out, r->err, r->term_signal != 0 ? 1 : r->exit_code};
}

Run& Invocation::RunOf(const std::string& cluster) {
  Run& r = runs_[cluster];
  r.cluster = cluster;
  return r;
}

ClientCommandAnswer Invocation::Answer() {
  std::vector<std::string> as_typed = {tool_name_};
  as_typed.insert(as_typed.end(), args_.begin(), args_.end());
  // As typed: the real command decides.
  if (!cmd_ || cmd_->about) return RunHere(as_typed);
  // -M/--clusters (sacct's -L too) naming no job: the home's command asks
  // those clusters (Slurm's multi-cluster mode, through the slurmdbd they
  // share); squeue prints a section for each (-l, -s too), sacct one table
  // (-l as its fields), and the routed jobs in them get their global ids (a
  // section's, or a line's by its Cluster field, which sacct is asked for
  // at the end and which is then removed). With ids named or
  // --json/--yaml: as typed.
  sections_ = cmd_->clusters && *tool_ == ClientTool::kSqueue;
  by_cluster_ = cmd_->clusters && *tool_ == ClientTool::kSacct;
  if (ClustersAsTyped(*cmd_)) return RunHere(as_typed);
  // --yaml (squeue, sacct): the clusters are asked for --json, and the one
  // document merged is written as Slurm's YAML (slurm_yaml.h).
  yaml_ = !cmd_->yaml_words.empty() && !cmd_->json &&
          (*tool_ == ClientTool::kSqueue || *tool_ == ClientTool::kSacct);
  scontrol_update_ = *tool_ == ClientTool::kScontrol && cmd_->verb == "update";
  if (scontrol_update_) LockUpdated();
  if (!FindJobs()) return RunHere(as_typed);
  // scancel of routed jobs with nothing but their ids: skyslurmd cancels
  // them (every copy, and no move makes another).
  if (*tool_ == ClientTool::kScancel && cmd_->id_words.size() == args_.size()) {
    return CancelRouted();
  }
  ArrangeFormats();
  WriteArgv();
  RunEach();
  if (scontrol_update_ && !updated_.empty()) CarryUpdates();
  if ((cmd_->json || yaml_) && (*tool_ == ClientTool::kSqueue || *tool_ == ClientTool::kSacct)) {
    return MergeDocuments();
  }
  return MergeText();
}

// scontrol update of routed jobs: each job (then its parts) locked from
// before its copies are read until the update is carried into its input
// (CarryUpdate), so that no move in between submits a copy without it.
void Invocation::LockUpdated() {
  for (const std::string& id : cmd_->ids) {
    if (!IsGlobalIdWord(id)) continue;
    if (auto job = m_.FindByGlobalId(SplitJobIdWord(id)->number); job.ok()) {
      updated_.push_back(job->sky_id);
    }
  }
  std::ranges::sort(updated_);
  updated_.erase(std::unique(updated_.begin(), updated_.end()), updated_.end());
  // The whole before its parts, as the daemon's own look takes them.
  for (const std::string& sky_id : updated_) {
    update_locks_.emplace_back(m_.LockFor(sky_id));
    for (const auto& part : m_.PartsOf(sky_id)) update_locks_.emplace_back(m_.LockFor(part.sky_id));
  }
}

void Invocation::AddJob(const store::SkyJob& job, const std::string& suffix, bool named) {
  std::vector<store::SkyJob> copies = m_.PartsOf(job.sky_id);
  if (copies.empty()) copies.push_back(job);
  for (const auto& c : copies) {
    if (c.native_id.empty() || c.cluster.empty()) continue;
    Run& r = RunOf(c.cluster);
    r.map[c.native_id] = job.global_id;
    if (!store::IsFinalState(c.state)) r.unsettled.insert(c.native_id);
    if (named) r.ids.push_back(c.native_id + suffix);
  }
}

bool Invocation::FindJobs() {
  listing_ = cmd_->ids.empty();
  for (const std::string& id : cmd_->ids) {
    if (!IsGlobalIdWord(id)) {
      RunOf(home_).ids.push_back(id);
      continue;
    }
    const JobIdWord word = *SplitJobIdWord(id);
    if (auto job = m_.FindByGlobalId(word.number); job.ok()) {
      AddJob(*job, word.rest, true);
      routed_sky_ids_.push_back(job->sky_id + word.rest);
    } else if (auto named = m_.DecodeGlobalIdOf(word.number)) {
      Run& r = RunOf(named->first);
      r.map[named->second] = word.number;
      r.ids.push_back(named->second + word.rest);
      routed_sky_ids_.push_back(named->first + ":" + named->second + word.rest);
    } else {
      RunOf(home_).ids.push_back(id);  // no cluster of ours: the home's command says so
    }
  }
  if (!listing_) return true;
  if (*tool_ != ClientTool::kSqueue && *tool_ != ClientTool::kSacct) return false;
  RunOf(home_);  // the home's own listing, as typed
  // sacct lists today's jobs unless told otherwise (-S narrows the
  // peers' too); squeue the jobs still in the queues.
  std::time_t since = 0;
  if (*tool_ == ClientTool::kSacct && !cmd_->window) {
    std::time_t now = m_.Now();
    std::tm local{};
    localtime_r(&now, &local);
    local.tm_hour = local.tm_min = local.tm_sec = 0;
    since = std::mktime(&local);
  }
  for (const auto& job : m_.List(/*live_only=*/*tool_ == ClientTool::kSqueue)) {
    if (job.global_id == 0 || !job.parent.empty()) continue;
    if (*tool_ == ClientTool::kSacct && job.created < since) continue;
    // The home's own listing has the jobs there; the peers are asked for theirs.
    AddJob(job, "", true);
  }
  runs_[home_].ids.clear();
  return true;
}

ClientCommandAnswer Invocation::CancelRouted() {
  ClientCommandAnswer answer;
  Status all = OkStatus();
  for (const auto& id : routed_sky_ids_) {
    // A job that has ended is no error, as Slurm's scancel is silent for a
    // job already done (a workflow engine cancels all it started on Ctrl-C).
    Status st = m_.Cancel(id);
    if (!st.ok() && st.code() != StatusCode::kFailedPrecondition && all.ok()) all = st;
  }
  if (!all.ok()) {
    answer.err += fmt::format("scancel: error: {}\n", all.message());
    answer.exit_code = 1;
  }
  if (runs_.contains(home_) && !runs_[home_].ids.empty()) {
    std::vector<std::string> argv = {"scancel"};
    argv.insert(argv.end(), runs_[home_].ids.begin(), runs_[home_].ids.end());
    const ClientCommandAnswer h = RunHere(argv);
    answer.out += h.out;
    answer.err += h.err;
    answer.exit_code = std::max(answer.exit_code, h.exit_code);
  }
  return answer;
}

// Each cluster's command: the user's options, its own ids in place of those
// named, and the format asked for in place of the user's (to find the ids
// in what it prints).
void Invocation::ArrangeFormats() {
  for (const auto& w : cmd_->id_words) {
    dropped_.insert(w.index);
    dropped_.insert(w.option);
  }
  // -s with -O (or SQUEUE_FORMAT2): steps' fields, printed as they are.
  const bool step_fields =
      cmd_->steps &&
      (cmd_->field_format || (cmd_->format.empty() && env_.contains("SQUEUE_FORMAT2")));
  if (*tool_ == ClientTool::kSqueue && !cmd_->structured && !step_fields) {
    if (cmd_->field_format) {
      if (!cmd_->field_format_spec.empty()) fields_ = MarkSqueueFields(cmd_->field_format_spec);
    } else {
      format_ = cmd_->format;
      if (format_.empty()) {
        if (auto f = env_.find("SQUEUE_FORMAT"); f != env_.end()) format_ = f->second;
      }
      const auto field_env = env_.find("SQUEUE_FORMAT2");
      if (field_env != env_.end() && cmd_->format.empty()) {
        fields_ = MarkSqueueFields(field_env->second);
      } else {
        if (format_.empty()) format_ = SqueueDefaultFormat(cmd_->long_format, cmd_->steps);
        marked_ = true;
      }
    }
    if (marked_ || fields_) {
      for (const std::size_t i : cmd_->format_words) dropped_.insert(i);
    }
  }
  // One table of every cluster's lines, one header (a -M section has its own).
  if (by_cluster_) {
    sacct_format_ = cmd_->format;
    if (auto f = env_.find("SACCT_FORMAT"); sacct_format_.empty() && f != env_.end()) {
      sacct_format_ = f->second;
    }
    if (sacct_format_.empty()) {
      sacct_format_ = cmd_->long_format ? std::string(kSacctLongFormat) : kSacctDefaultFormat;
    }
    sacct_format_ += cmd_->parsable ? ",Cluster" : fmt::format(",Cluster%{}", kSacctClusterWidth);
    for (const std::size_t i : cmd_->format_words) dropped_.insert(i);
  }
  // -l with the format given in its place: the word without it (-l and -o
  // exclude each other); squeue's date line printed here.
  without_long_ =
      cmd_->long_format && (by_cluster_ || (*tool_ == ClientTool::kSqueue && (marked_ || fields_)));
  if (without_long_) {
    for (const std::size_t i : cmd_->long_words) rewritten_[i] = WithoutLongOption(args_[i]);
  }
  // squeue -M -h: asked with headers (the sections say whose each line is).
  bare_sections_ = sections_ && cmd_->noheader && (marked_ || fields_);
  if (bare_sections_) {
    for (const std::size_t i : cmd_->noheader_words) dropped_.insert(i);
  }
  table_ = !sections_ && ((*tool_ == ClientTool::kSqueue && (marked_ || fields_)) ||
                          (*tool_ == ClientTool::kSacct && !cmd_->structured));
  if (table_) {
    for (const std::size_t i : cmd_->noheader_words) dropped_.insert(i);
  }
}

void Invocation::WriteArgv() {
  // -M: each cluster's routed jobs; the home's command asks them all.
  for (auto& [cluster, r] : runs_) {
    if (!listing_ && r.ids.empty()) continue;
    if (cmd_->clusters) {
      section_maps_[cluster] = r.map;
      section_unsettled_[cluster] = r.unsettled;
      if (cluster != home_) continue;
    }
    r.argv = {tool_name_};
    for (std::size_t i = 0; i < args_.size(); ++i) {
      if (yaml_ && std::ranges::find(cmd_->yaml_words, i) != cmd_->yaml_words.end()) {
        r.argv.push_back("--json" + args_[i].substr(std::string_view("--yaml").size()));
      } else if (auto w = rewritten_.find(i); w != rewritten_.end()) {
        if (!w->second.empty()) r.argv.push_back(w->second);
      } else if (!dropped_.contains(i)) {
        r.argv.push_back(args_[i]);
      } else if (scontrol_update_ && i == cmd_->id_words.front().index) {
        r.argv.push_back(args_[i].substr(0, cmd_->id_words.front().prefix) +
                         fmt::format("{}", fmt::join(r.ids, ",")));
      }
    }
    // Each line's job and state, to show an unsettled job's end as CG.
    const bool track = marked_ && !cmd_->steps && !sections_;
    if (marked_) r.argv.push_back("--format=" + MarkSqueueFormat(format_, cmd_->steps, track));
    if (fields_) r.argv.push_back("--Format=" + fields_->format);
    if (by_cluster_) r.argv.push_back("--format=" + sacct_format_);
    const bool home_listing = listing_ && cluster == home_;
    // A job that ended there is left out by squeue's default states: asked
    // for all, the ended lines of other jobs dropped again (SqueueHold).
    if (track && !home_listing && !cmd_->states && !r.unsettled.empty()) {
      r.argv.push_back("--states=all");
      r.widened = true;
    }
    if (!home_listing && !scontrol_update_) {
      if (*tool_ == ClientTool::kSqueue || *tool_ == ClientTool::kSacct) {
        r.argv.push_back(fmt::format("--jobs={}", fmt::join(r.ids, ",")));
      } else {
        r.argv.insert(r.argv.end(), r.ids.begin(), r.ids.end());
      }
    }
  }
}

// Side by side: a peer's command costs a round trip. A cluster whose kind
// has no Slurm commands is not asked.
void Invocation::RunEach() {
  std::vector<std::future<void>> pending;
  for (auto& [cluster, r] : runs_) {
    if (r.argv.empty()) continue;
    backend::Backend* b = m_.BackendOf(cluster);
    if (b == nullptr) {
      r.result = NotFoundError(fmt::format("no cluster named {}", cluster));
      continue;
    }
    if (!m_.CapabilitiesOf(cluster).client_commands) {
      r.result = UnimplementedError(cluster + " has no Slurm commands");
      continue;
    }
    // (A pointer: clang before 16 cannot capture a structured binding.)
    // As the user who asked, on its thread too (a site's daemon: their
    // uid, so that Slurm's own permissions and PrivateData decide).
    pending.push_back(
        std::async(std::launch::async, [run = &r, b, this, working = WorkingFor::Current()] {
          WorkingForScope as_asker(working);
          run->result = b->RunClientCommand(run->argv, forwarded_, m_.submit_timeout());
        }));
  }
  for (auto& p : pending) p.get();
}

void Invocation::CarryUpdates() {
  std::set<std::string> done;  // the clusters whose scontrol took the update
  for (const auto& [cluster, r] : runs_) {
    if (r.result.ok() && r.result->exit_code == 0 && r.result->term_signal == 0) {
      done.insert(cluster);
    }
  }
  std::vector<std::string> words;
  for (std::size_t i = 0; i < args_.size(); ++i) {
    if (i != cmd_->id_words.front().index && args_[i].find('=') != std::string::npos &&
        !args_[i].starts_with('-')) {
      words.push_back(args_[i]);
    }
  }
  for (const std::string& sky_id : updated_) m_.CarryUpdate(sky_id, words, done);
}

// Merged: the home's first, then the others by name.
std::vector<Run*> Invocation::Order() {
  std::vector<Run*> order;
  if (runs_.contains(home_)) order.push_back(&runs_[home_]);
  for (auto& [cluster, r] : runs_) {
    if (cluster != home_) order.push_back(&r);
  }
  return order;
}

// One document, as one cluster's command prints it.
ClientCommandAnswer Invocation::MergeDocuments() {
  ClientCommandAnswer answer;
  std::vector<JsonPart> parts;
  ExitTally tally;
  for (Run* r : Order()) {
    if (r->argv.empty()) continue;
    const CommandOutput* o = Ran(*r, tally, answer.err);
    if (o == nullptr) continue;
    parts.push_back({o->out, &r->map, &r->unsettled});
    answer.err += o->err;
  }
  const int worst = tally.worst;
  auto merged = MergeJobsJson(parts);
  if (!merged.ok()) {
    // Not the JSON expected: what each printed, as it is.
    for (const auto& p : parts) answer.out += p.text;
    answer.err += fmt::format("{}: error: skyslurm: the clusters' --json could not be merged: {}\n",
                              tool_name_, merged.status().message());
    answer.exit_code = std::max(worst, 1);
    return answer;
  }
  answer.out = *merged;
  if (yaml_ && !merged->empty()) {
    auto written = SlurmYamlFromJson(
        *merged, *tool_ == ClientTool::kSqueue ? EmptyString::kNull : EmptyString::kEmpty);
    if (!written.ok()) {
      answer.err += fmt::format("{}: error: skyslurm: the clusters' --yaml: {}\n", tool_name_,
                                written.status().message());
      answer.exit_code = std::max(worst, 1);
      return answer;
    }
    answer.out = *written;
  }
  answer.exit_code = tally.any_ok ? 0 : worst;
  return answer;
}

const CommandOutput* Invocation::Ran(const Run& r, ExitTally& tally, std::string& err) const {
  if (!r.result.ok()) {
    err += fmt::format("{}: error: skyslurm: {}: {}\n", tool_name_, r.cluster,
                       r.result.status().message());
    tally.Add(1);
    return nullptr;
  }
  tally.Add(r.result->term_signal != 0 ? 1 : r.result->exit_code);
  return &*r.result;
}

// The text each cluster printed, its ids mapped, under one header.
ClientCommandAnswer Invocation::MergeText() {
  ClientCommandAnswer answer;
  const int header_lines = *tool_ == ClientTool::kSacct && !cmd_->parsable ? 2 : 1;
  bool header_written = false;
  ExitTally tally;
  for (Run* r : Order()) {
    if (r->argv.empty()) continue;
    const CommandOutput* ran = Ran(*r, tally, answer.err);
    if (ran == nullptr) continue;
    const CommandOutput& o = *ran;
    std::string text = o.out;
    if (*tool_ == ClientTool::kSqueue && (marked_ || fields_)) {
      auto unmark = [&](std::string_view part, const IdMap& map) {
        return marked_ ? UnmarkSqueueOutput(part, map) : UnmarkSqueueFields(part, *fields_, map);
      };
      const SqueueHold hold{&r->unsettled, r->widened};
      text = sections_ ? MapClusterSections(text, section_maps_, unmark)
             : marked_ ? UnmarkSqueueOutput(text, r->map, &hold)
                       : unmark(text, r->map);
      if (bare_sections_) {
        const bool own_layout = marked_ && cmd_->format.empty() && !env_.contains("SQUEUE_FORMAT");
        text = SectionsWithoutHeaders(text, own_layout && !cmd_->steps);
      }
    } else if (by_cluster_) {
      text = MapSacctByCluster(text, cmd_->parsable, section_maps_, section_unsettled_);
    } else if (*tool_ == ClientTool::kSacct && !cmd_->structured) {
      const bool all_unsettled =
          !r->ids.empty() && std::ranges::all_of(r->ids, [&](const std::string& id) {
            return r->unsettled.contains(id);
          });
      text = MapSacctOutput(text, cmd_->parsable, r->map, r->unsettled, all_unsettled);
    } else if (*tool_ == ClientTool::kScontrol || *tool_ == ClientTool::kScancel) {
      text = MapScontrolOutput(text, r->map, r->unsettled);
    }
    if (table_) {
      // Every cluster's command printed its header; the user sees one, or none (-h/-n).
      if (header_written || cmd_->noheader) {
        text = DropLines(text, header_lines);
      } else if (!text.empty()) {
        header_written = true;
      }
    }
    answer.out += text;
    answer.err += MapScontrolOutput(o.err, r->map);
  }
  if (without_long_ && *tool_ == ClientTool::kSqueue && !cmd_->noheader && !answer.out.empty()) {
    answer.out = SqueueDateLine(m_.Now()) + answer.out;
  }
  // squeue and sacct name several jobs and print those they find: one
  // cluster's "no such job" is not the command's failure while another
  // printed its job. scontrol and scancel fail for any job that failed.
  answer.exit_code = (table_ && tally.any_ok) ? 0 : tally.worst;
  return answer;
}

}  // namespace

ClientCommandAnswer SlurmFront::Run(const std::string& tool, const std::vector<std::string>& args,
                                    const std::map<std::string, std::string>& env) {
  return Invocation(manager_, tool, args, env).Answer();
}

}  // namespace skyslurm::daemon
