// The job ids in an invocation of Slurm's client commands (squeue, sacct,
// scontrol, scancel), as each command reads its options, so that the shim
// can tell at once whether a routed job is involved (a global id:
// job/global_id.h) and skyslurmd can put each cluster's own ids in their
// place. Standard library only: the shim links it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skyslurm {

enum class ClientTool { kSqueue, kSacct, kScontrol, kScancel };
std::optional<ClientTool> ClientToolNamed(std::string_view name);
std::string_view ClientToolName(ClientTool tool);

// Where the job ids are in the arguments.
struct ClientCommand {
  ClientTool tool = ClientTool::kSqueue;
  // Indices into the arguments of the words that hold job ids: a list
  // ("12,805306445_7") for squeue -j/sacct -j, one id per word for scancel
  // and scontrol's hold/release/requeue, "JobId=12" for scontrol update;
  // `prefix` counts what precedes the ids in the word ("--jobs=", "-j",
  // "JobId=", "").
  struct IdWord {
    std::size_t index = 0;
    std::size_t prefix = 0;  // characters before the ids in the word
    std::size_t option = 0;  // the option's word (-j, --jobs; = index when one word)
  };
  std::vector<IdWord> id_words;
  // The ids named, in order ("805306445_7", "12.batch").
  std::vector<std::string> ids;
  // scontrol: the command word ("show", "hold", "update", ...) and, for
  // show, what is shown ("job"); other tools: "".
  std::string verb;
  std::string object;
  // Options of the others' kind: -M/--clusters, -L/--allclusters (other
  // clusters than the home's), --json/--yaml (not text), -O/--Format and
  // -o/--format (squeue/sacct's formats), -h/-n/--noheader, -P/-p, -l.
  bool clusters = false;
  bool structured = false;
  bool json = false;  // --json (structured)
  // --yaml's words (structured, not json): squeue and sacct print one
  // document over clusters asked for --json in their place.
  std::vector<std::size_t> yaml_words;
  // --help, --usage, --version/-V, sacct's -h/-e/--helpformat: about the
  // command, no job.
  bool about = false;
  std::string format;         // -o/--format's value (squeue, sacct)
  bool long_format = false;   // squeue -l / sacct -l
  // Indices of the words with -l/--long ("-l", "--long", a bundle "-Xl").
  std::vector<std::size_t> long_words;
  bool field_format = false;  // squeue -O/--Format
  std::string field_format_spec;  // its value ("JobID:.18,State"); its words in format_words
  bool noheader = false;
  bool parsable = false;                    // sacct -p/-P
  bool steps = false;                       // squeue -s/--steps
  bool states = false;                      // squeue -t/--states
  std::vector<std::size_t> noheader_words;  // indices of -h/-n/--noheader
  std::vector<std::size_t> format_words;    // indices of the -o/--format option (and its value)
  // The words that name a time window (sacct -S/-E and theirs).
  bool window = false;
};

// nullopt when the arguments cannot be read (the real command says why).
std::optional<ClientCommand> ParseClientCommand(ClientTool tool,
                                                const std::vector<std::string>& args);

// -M/--clusters (sacct's -L) that the real command runs as typed: with ids
// named, --json/--yaml, scontrol/scancel, sacct -l with a format (which
// sacct refuses). Otherwise (squeue or sacct listing the user's jobs) the routed
// jobs are shown in the clusters' sections (skyslurmd: slurm_commands.h).
bool ClustersAsTyped(const ClientCommand& cmd);

// Splits a job list as Slurm does ("1,2_[3-4],5"): commas outside brackets.
std::vector<std::string> SplitJobList(std::string_view list);

}  // namespace skyslurm
