// Differential acceptance: every generated value of every value-taking
// sbatch option (tests/support/option_values.h) is asked of the real sbatch
// on the testbed's alpha, as a held job, and of skyslurm's parser. A held
// submission separates what sbatch's own parser (and its own checks before
// sending) refuses, from what slurmctld refuses ("Batch job submission
// failed"): only the former is the parser's business. Where sbatch accepts,
// the value skyslurm reads must be the one slurmctld stored (scontrol show
// job: memory in MB, GPU type and count, time in minutes, counts).
//
// Every divergence fails the test unless docs/sbatch-compatibility.md lists
// it (kKnown below mirrors that list). The sample is bounded for CI:
//   SKYSLURM_DIFFERENTIAL_RANDOM   random values per option beside the
//                                  listed ones (default 10; 200 is the full run)
//   SKYSLURM_DIFFERENTIAL_SEED     the generator's seed (default 11)
// The counts per option are printed; the full run's are in the docs.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "broker/job/request.h"
#include "broker/job/values.h"
#include "broker/util/command.h"
#include "tests/support/option_values.h"
#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

// Options whose value skyslurm carries byte for byte without reading it: the
// real sbatch of the cluster the job goes to reads it. A value sbatch's own
// parser refuses is then refused by that sbatch at submission (nothing is
// submitted, its message is shown), not by skyslurm's parser before placement.
const std::set<std::string> kCarried = {"dependency", "distribution", "cpu-freq", "signal",
                                        "mail-type",  "export",       "begin",    "nice",
                                        "open-mode",  "exclusive",    "deadline"};

// Other options sbatch needs beside one under test for its own checks to pass.
std::vector<std::string> ContextFor(const std::string& option) {
  if (option == "mem-per-gpu") return {"--gpus=1"};
  if (option == "gpus-per-task") return {"--ntasks=1"};
  return {};
}

// A value of sbatch's that skyslurm knowingly reads otherwise: why.
// Each is listed in docs/sbatch-compatibility.md.
std::optional<std::string> KnownDivergence(const std::string& option, const std::string& value,
                                           bool sbatch_accepts, const job::Request* ours) {
  if (kCarried.count(option) && !sbatch_accepts) {
    return "carried as written: the destination's sbatch refuses it at submission";
  }
  const bool gres_like = option == "gres" || option.starts_with("gpus");
  if (gres_like && !sbatch_accepts && ours != nullptr) {
    // sbatch checks GRES names against its own slurm.conf's GresTypes and the
    // mix of typed and untyped requests against its nodes: per cluster, so
    // skyslurm leaves them to each cluster's translation and scheduler. Only
    // those cases are excused.
    bool typed = false, untyped = false;
    for (const auto& g : ours->gpus) (g.type.empty() ? untyped : typed) = true;
    if (!ours->other_gres.empty() || (typed && untyped)) {
      return "GRES names and typed/untyped mixes are checked per cluster";
    }
  }
  if (option == "ntasks-per-node" && sbatch_accepts) {
    // Slurm keeps an int of strtol's long: one that wraps to 0 or below is
    // ignored by Slurm and refused by skyslurm.
    errno = 0;
    const long long n = std::strtoll(value.c_str(), nullptr, 10);
    if (errno == 0 && static_cast<std::int32_t>(static_cast<std::uint32_t>(n)) <= 0) {
      return "Slurm wraps --ntasks-per-node to 0 or below and ignores it";
    }
  }
  if ((option == "time" || option == "time-min") && sbatch_accepts && !value.empty() &&
      value[0] == '-' && value != "-1") {
    return "a negative time passes sbatch's parser as a wrapped-around number";
  }
  return std::nullopt;
}

// "24G", "1000M", "0" -> MB.
std::optional<std::int64_t> SlurmMb(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::int64_t scale = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'K':
      return std::nullopt;
    case 'M':
      digits.pop_back();
      break;
    case 'G':
      scale = 1024;
      digits.pop_back();
      break;
    case 'T':
      scale = 1024 * 1024;
      digits.pop_back();
      break;
    case 'P':
      scale = std::int64_t{1024} * 1024 * 1024;
      digits.pop_back();
      break;
    default:
      break;
  }
  char* end = nullptr;
  const long long n = std::strtoll(digits.c_str(), &end, 10);
  if (end == digits.c_str() || *end != '\0') return std::nullopt;
  return n * scale;
}

// Whether slurmctld takes a GRES field for a count, and which: C's strtoull,
// then nothing or one of suffix_mult's units (checked with the C library, not
// with skyslurm's parser).
std::optional<unsigned long long> SlurmCount(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  if (n == ULLONG_MAX) return std::nullopt;
  std::string unit(end);
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::map<std::string, unsigned long long> kUnits = {{"", 1},
                                                                   {"k", 1024},
                                                                   {"kib", 1024},
                                                                   {"kb", 1000},
                                                                   {"m", 1u << 20},
                                                                   {"mib", 1u << 20},
                                                                   {"mb", 1000000},
                                                                   {"g", 1u << 30},
                                                                   {"gib", 1u << 30},
                                                                   {"gb", 1000000000},
                                                                   {"t", 1ull << 40},
                                                                   {"tib", 1ull << 40},
                                                                   {"tb", 1000000000000},
                                                                   {"p", 1ull << 50},
                                                                   {"pib", 1ull << 50},
                                                                   {"pb", 1000000000000000}};
  auto it = kUnits.find(unit);
  if (it == kUnits.end()) return std::nullopt;
  return n * it->second;
}

// The GPU types of the items slurmctld keeps in a stored TresPer* string
// ("gres:gpu:h100:2,gres:gpu:a100" -> "a100,h100"); items with a count of 0
// are dropped.
std::string SlurmGpuTypes(const std::string& tres) {
  std::set<std::string> types;
  std::stringstream in(tres);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.starts_with("gres:")) item.erase(0, 5);
    if (!item.starts_with("gpu:")) continue;
    const std::string rest = item.substr(4);
    const auto colon = rest.find(':');
    std::string type;
    std::optional<unsigned long long> count = 1;
    if (colon == std::string::npos) {
      if (auto c = SlurmCount(rest)) {
        count = c;
      } else {
        type = rest;
      }
    } else {
      type = rest.substr(0, colon);
      count = SlurmCount(rest.substr(colon + 1));
    }
    while (!type.empty() && type.back() == ' ') type.pop_back();  // as for ours, below
    if (count && *count != 0 && !type.empty()) types.insert(type);
  }
  return fmt::format("{}", fmt::join(types, ","));
}

// The GPUs slurmctld counted: "gres/gpu=N" in the job's TRES (0 when none).
std::string SlurmGpuTotal(const std::map<std::string, std::string>& job) {
  auto it = job.find("TRES");
  if (it == job.end()) return "0";
  std::stringstream in(it->second);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.starts_with("gres/gpu=")) return item.substr(9);
  }
  return "0";
}

// skyslurm's reading of the same: the types and the total (one node, one task).
std::pair<std::string, std::string> OurGpus(const job::Request& r,
                                            std::initializer_list<job::Opt> options) {
  std::set<std::string> types;
  std::int64_t total = 0;
  for (const auto& g : r.gpus) {
    if (std::find(options.begin(), options.end(), g.option) == options.end()) continue;
    // scontrol's one-line output loses a type's trailing blanks ("h100 " at
    // the end of a line): compared without them.
    std::string type = g.type;
    while (!type.empty() && type.back() == ' ') type.pop_back();
    if (!type.empty()) types.insert(type);
    total += g.count;
  }
  return {fmt::format("{}", fmt::join(types, ",")), std::to_string(total)};
}

std::string Minutes(const std::optional<job::TimeLimit>& t) {
  if (!t) return "unset";
  return t->infinite() ? "UNLIMITED" : std::to_string(*t->minutes);
}
std::string SlurmMinutes(const std::string& text) {
  if (text == "N/A") return "unset";
  auto t = job::ParseTimeLimit(text);  // scontrol prints D-HH:MM:SS or HH:MM:SS
  return t.ok() ? Minutes(*t) : "unreadable '" + text + "'";
}

// The held array's tasks as slurmctld stored them (ArrayTaskId: "1,3,5-7",
// steps where it chooses, "0-100:10"; scontrol cuts a long one short with
// "...") against skyslurm's reading, both written as plain runs; the
// throttle from ArrayTaskThrottle. Slurm's text is expanded here, not by
// skyslurm's parser.
std::pair<std::string, std::string> CompareArrays(const std::map<std::string, std::string>& job,
                                                  const job::Request& r) {
  auto it = job.find("ArrayTaskId");
  std::string slurm_text = it == job.end() ? "" : it->second;
  const bool cut = slurm_text.ends_with("...");
  slurm_text = slurm_text.substr(0, slurm_text.find('%'));
  if (cut) {
    // The last element may itself be cut short ("5-"): up to the last comma.
    const auto comma = slurm_text.rfind(',');
    slurm_text.resize(comma == std::string::npos ? 0 : comma);
  }
  std::vector<std::int64_t> slurm;
  std::stringstream in(slurm_text);
  std::string element;
  while (std::getline(in, element, ',')) {
    const auto dash = element.find('-'), colon = element.find(':');
    const std::int64_t first = std::stoll(element);
    const std::int64_t last =
        dash == std::string::npos ? first : std::stoll(element.substr(dash + 1));
    const std::int64_t step =
        colon == std::string::npos ? 1 : std::stoll(element.substr(colon + 1));
    for (std::int64_t i = first; i <= last; i += step) slurm.push_back(i);
  }
  auto throttle = job.find("ArrayTaskThrottle");
  const std::string slurm_throttle =
      throttle == job.end() || throttle->second == "0" ? "" : "%" + throttle->second;
  if (it == job.end()) return {"(none)", r.array_indices ? "an array" : "(none)"};
  if (!r.array_indices) return {"an array", "(none)"};
  std::vector<std::int64_t> ours = r.array_indices->indices;
  if (cut && ours.size() > slurm.size()) ours.resize(slurm.size());
  const std::string ours_throttle =
      r.array_indices->throttle ? fmt::format("%{}", *r.array_indices->throttle) : "";
  const std::string tail = cut ? "..." : "";
  return {job::FormatArrayIndices(slurm) + tail + slurm_throttle,
          job::FormatArrayIndices(ours) + tail + ours_throttle};
}

// What slurmctld stored for the option, and what skyslurm read, as text.
std::pair<std::string, std::string> Compare(const std::string& option,
                                            const std::map<std::string, std::string>& job,
                                            const job::Request& r) {
  auto field = [&](const std::string& key) {
    auto it = job.find(key);
    return it == job.end() ? std::string("(none)") : it->second;
  };
  auto mb = [](std::optional<std::int64_t> v) { return v ? std::to_string(*v) : "unset"; };
  if (option == "mem") return {mb(SlurmMb(field("MinMemoryNode"))), mb(r.mem_mb)};
  if (option == "mem-per-cpu") {
    // --mem-per-cpu=0 is all of a node's memory: slurmctld shows MinMemoryNode=0.
    if (job.count("MinMemoryCPU") == 0) {
      return {"node " + mb(SlurmMb(field("MinMemoryNode"))), "node " + mb(r.mem_mb)};
    }
    return {mb(SlurmMb(field("MinMemoryCPU"))), mb(r.mem_per_cpu_mb)};
  }
  if (option == "mem-per-gpu") {
    std::string t = field("MemPerTres");
    const auto colon = t.rfind(':');
    return {colon == std::string::npos ? t : t.substr(colon + 1), mb(r.mem_per_gpu_mb)};
  }
  if (option == "time") return {SlurmMinutes(field("TimeLimit")), Minutes(r.time_limit)};
  if (option == "time-min") return {SlurmMinutes(field("TimeMin")), Minutes(r.time_min)};
  if (option == "nodes") {
    // NumNodes is the minimum once slurmctld settled it, "min-max" while held.
    std::string n = field("NumNodes");
    return {n.substr(0, n.find('-')), r.nodes ? std::to_string(r.nodes->min) : "unset"};
  }
  if (option == "ntasks")
    return {field("NumTasks"), r.ntasks ? std::to_string(*r.ntasks) : "unset"};
  if (option == "cpus-per-task") {
    return {field("CPUs/Task"), r.cpus_per_task ? std::to_string(*r.cpus_per_task) : "unset"};
  }
  if (option == "ntasks-per-node") {
    std::string n = field("NtasksPerN:B:S:C");
    return {n.substr(0, n.find(':')), r.ntasks_per_node ? std::to_string(*r.ntasks_per_node) : "0"};
  }
  auto gpus = [&](const char* tres_field, std::initializer_list<job::Opt> options) {
    const std::string stored = field(tres_field) == "(none)" ? "" : field(tres_field);
    auto [types, total] = OurGpus(r, options);
    const std::string slurm_total = SlurmGpuTotal(job);
    // No GPU counted, no type that matters; scontrol's words lose blanks.
    std::string slurm_types = slurm_total == "0" ? "" : SlurmGpuTypes(stored);
    return std::pair<std::string, std::string>{
        fmt::format("types [{}], {} GPUs", slurm_types, slurm_total),
        fmt::format("types [{}], {} GPUs", types, total)};
  };
  // --gres and --gpus-per-node both land in TresPerNode.
  if (option == "gres" || option == "gpus-per-node") {
    return gpus("TresPerNode", {job::Opt::kGres, job::Opt::kGpusPerNode});
  }
  if (option == "gpus") return gpus("TresPerJob", {job::Opt::kGpus});
  if (option == "array") return CompareArrays(job, r);
  if (option == "gpus-per-task") return gpus("TresPerTask", {job::Opt::kGpusPerTask});
  return {"", ""};  // carried: acceptance only
}

// scontrol -o show job: one line per job, "Key=Value" words.
std::map<std::string, std::map<std::string, std::string>> ShowJobs(const std::string& text) {
  std::map<std::string, std::map<std::string, std::string>> jobs;
  std::stringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    // A value with blanks in it (a GRES type the user wrote with one) goes
    // on in the words that have no '='.
    std::map<std::string, std::string> fields;
    std::stringstream words(line);
    std::string word, last;
    while (words >> word) {
      const auto eq = word.find('=');
      if (eq != std::string::npos) {
        last = word.substr(0, eq);
        fields[last] = word.substr(eq + 1);
      } else if (!last.empty()) {
        fields[last] += " " + word;
      }
    }
    if (fields.count("JobId")) jobs[fields["JobId"]] = std::move(fields);
  }
  return jobs;
}

struct Tally {
  int tried = 0, accepted = 0, parser_refused = 0, controller_refused = 0;
  int divergent = 0, known = 0, values_compared = 0;
};

class SbatchDifferentialTest : public TestbedTest {};

TEST_F(SbatchDifferentialTest, SkyslurmReadsEveryValueAsSbatchDoes) {
  const auto seed = static_cast<std::uint32_t>(EnvInt("SKYSLURM_DIFFERENTIAL_SEED", 11));
  const int random = EnvInt("SKYSLURM_DIFFERENTIAL_RANDOM", 10);
  const std::vector<OptionValue> cases = GenerateOptionValues(seed, random);
  ASSERT_GT(cases.size(), 500u);

  // The held jobs are all named skydiff: cancelled by name before (a killed
  // run's) and on every way out of this one.
  const auto cancel_held = [this] { RunOn(tb_, "alpha", {"scancel", "-n", "skydiff"}); };
  cancel_held();
  struct Undo {
    std::function<void()> undo;
    ~Undo() { undo(); }
  } cancel_on_exit{cancel_held};

  // One bash runs every sbatch: a process start per value, not two.
  TempDir tmp;
  std::string script = "cd " + ShellQuote(tmp.path()) + "\n";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::string words;
    for (const auto& c : ContextFor(cases[i].option)) words += " " + ShellQuote(c);
    words += " " + ShellQuote("--" + cases[i].option + "=" + cases[i].value);
    script += fmt::format(
        "o=$(sbatch --hold --parsable -J skydiff -o /dev/null{} --wrap=true 2>&1 </dev/null); "
        "r=$?; o=${{o//$'\\n'/ | }}; printf '%s\\t%s\\t%s\\n' {} \"$r\" \"$o\"\n",
        words, i);
  }
  WriteFile(tmp.File("ask.sh"), script);
  Command ask;
  ask.argv = {"bash", tmp.File("ask.sh")};
  ask.env_set = {{"SLURM_CONF", tb_.SlurmConf("alpha")}};
  ask.timeout = std::chrono::minutes(30);
  const CommandOutput asked = Exec(ask);
  ASSERT_TRUE(asked.success()) << asked.err;

  struct Answer {
    int rc = -1;
    std::string said;
  };
  std::vector<Answer> answers(cases.size());
  {
    std::stringstream lines(asked.out);
    std::string line;
    while (std::getline(lines, line)) {
      const auto t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
      ASSERT_NE(t2, std::string::npos) << line;
      const std::size_t i = std::stoul(line.substr(0, t1));
      ASSERT_LT(i, cases.size());
      answers[i] = {std::stoi(line.substr(t1 + 1, t2 - t1 - 1)), line.substr(t2 + 1)};
    }
  }
  const CommandOutput shown = RunOn(tb_, "alpha", {"scontrol", "-o", "show", "job"});
  const auto jobs = ShowJobs(shown.out);

  std::map<std::string, Tally> tally;
  std::vector<std::string> failures, known;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const OptionValue& c = cases[i];
    const Answer& a = answers[i];
    Tally& t = tally[c.option];
    ++t.tried;
    ASSERT_NE(a.rc, -1) << "no answer for --" << c.option << "=" << c.value;
    const bool accepted = a.rc == 0;
    const bool by_controller =
        !accepted && a.said.find("Batch job submission failed") != std::string::npos;
    if (accepted)
      ++t.accepted;
    else if (by_controller)
      ++t.controller_refused;
    else
      ++t.parser_refused;

    job::RequestInput in;
    in.tool = job::Tool::kSbatch;
    in.args = ContextFor(c.option);
    in.args.push_back("--" + c.option + "=" + c.value);
    in.args.push_back("--wrap=true");
    const auto ours = job::ParseRequest(in);
    const std::string what = fmt::format("--{}={}", c.option, c.value);

    std::string divergence;
    if (accepted && !ours.ok()) {
      divergence =
          fmt::format("{}: sbatch accepts it, skyslurm refuses: {}", what, ours.status().message());
    } else if (!accepted && !by_controller && ours.ok()) {
      divergence = fmt::format("{}: sbatch refuses it ({}), skyslurm accepts", what, a.said);
    } else if (accepted && ours.ok() && !kCarried.count(c.option)) {
      auto it = jobs.find(a.said.substr(0, a.said.find(';')));
      if (it == jobs.end()) {
        divergence = fmt::format("{}: job {} not in scontrol show job", what, a.said);
      } else {
        auto [slurm, mine] = Compare(c.option, it->second, *ours);
        ++t.values_compared;
        if (slurm != mine) {
          divergence = fmt::format("{}: slurmctld stored {}, skyslurm read {}", what, slurm, mine);
        }
      }
    }
    if (divergence.empty()) continue;
    if (auto why = KnownDivergence(c.option, c.value, accepted, ours.ok() ? &*ours : nullptr)) {
      ++t.known;
      known.push_back(divergence + " [known: " + *why + "]");
    } else {
      ++t.divergent;
      failures.push_back(divergence);
    }
  }

  std::string table = fmt::format(
      "seed {}, {} random values per option, {} values in all\n"
      "{:<16} {:>6} {:>9} {:>13} {:>14} {:>9} {:>7} {:>10}\n",
      seed, random, cases.size(), "option", "tried", "accepted", "sbatch said no", "slurmctld no",
      "compared", "known", "divergent");
  Tally all;
  for (const auto& name : GeneratedOptions()) {
    const Tally& t = tally[name];
    table += fmt::format("{:<16} {:>6} {:>9} {:>13} {:>14} {:>9} {:>7} {:>10}\n", name, t.tried,
                         t.accepted, t.parser_refused, t.controller_refused, t.values_compared,
                         t.known, t.divergent);
    all.tried += t.tried;
    all.accepted += t.accepted;
    all.parser_refused += t.parser_refused;
    all.controller_refused += t.controller_refused;
    all.values_compared += t.values_compared;
    all.known += t.known;
    all.divergent += t.divergent;
  }
  table += fmt::format("{:<16} {:>6} {:>9} {:>13} {:>14} {:>9} {:>7} {:>10}\n", "all", all.tried,
                       all.accepted, all.parser_refused, all.controller_refused,
                       all.values_compared, all.known, all.divergent);
  std::printf("%s", table.c_str());
  if (std::getenv("SKYSLURM_DIFFERENTIAL_VERBOSE") != nullptr) {
    for (const auto& k : known) std::printf("  %s\n", k.c_str());
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " divergences:\n"
                                << fmt::format("{}", fmt::join(failures, "\n"));
}

}  // namespace
}  // namespace skyslurm::testing
