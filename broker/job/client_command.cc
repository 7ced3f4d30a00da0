#include "broker/job/client_command.h"

#include <algorithm>
#include <cctype>

namespace skyslurm {
namespace {

// How one command reads its options (Slurm 22.05's getopt tables, the
// options that matter here; any other short option is taken as a flag and
// any other --long option as taking its value only after '=').
struct Grammar {
  std::string_view short_with_value;
  std::vector<std::string_view> long_with_value;
  char ids = 0;               // the short option of the job list
  std::string_view ids_long;  // and its long name
  char noheader = 0;
  char format = 0;
  char field_format = 0;     // squeue -O
  std::vector<char> window;  // sacct -S, -E
};

const Grammar& GrammarOf(ClientTool tool) {
  static const Grammar squeue{"AijLMnoOpqRSstuw",
                              {"account", "iterate", "jobs", "licenses", "clusters", "name",
                               "format", "Format", "partition", "qos", "reservation", "sort",
                               "steps", "states", "state", "user", "nodelist", "sibling"},
                              'j',
                              "jobs",
                              'h',
                              'o',
                              'O',
                              {}};
  static const Grammar sacct{
      "ACEfgiIjkKMNoqrsSTuWx",
      {"accounts",      "constraints",  "endtime",   "file",   "gid",
       "group",         "nnodes",       "ncpus",     "jobs",   "timelimit-min",
       "timelimit-max", "clusters",     "nodelist",  "format", "qos",
       "partition",     "state",        "starttime", "user",   "uid",
       "wckeys",        "associations", "name",      "reason", "delimiter"},
      'j',
      "jobs",
      'n',
      'o',
      0,
      {'S', 'E'}};
  static const Grammar scancel{"AMnpqRstuw",
                               {"account", "clusters", "name", "partition", "qos", "reservation",
                                "signal", "state", "user", "nodelist", "sibling", "wckey"},
                               0,
                               "",
                               0,
                               0,
                               0,
                               {}};
  static const Grammar scontrol{"M", {"clusters"}, 0, "", 0, 0, 0, {}};
  switch (tool) {
    case ClientTool::kSqueue:
      return squeue;
    case ClientTool::kSacct:
      return sacct;
    case ClientTool::kScancel:
      return scancel;
    case ClientTool::kScontrol:
      return scontrol;
  }
  return squeue;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsIdVerb(const std::string& verb) {
  return verb == "hold" || verb == "uhold" || verb == "release" || verb == "requeue" ||
         verb == "requeuehold" || verb == "suspend" || verb == "resume" || verb == "top";
}

}  // namespace

std::optional<ClientTool> ClientToolNamed(std::string_view name) {
  if (name == "squeue") return ClientTool::kSqueue;
  if (name == "sacct") return ClientTool::kSacct;
  if (name == "scontrol") return ClientTool::kScontrol;
  if (name == "scancel") return ClientTool::kScancel;
  return std::nullopt;
}

std::string_view ClientToolName(ClientTool tool) {
  switch (tool) {
    case ClientTool::kSqueue:
      return "squeue";
    case ClientTool::kSacct:
      return "sacct";
    case ClientTool::kScontrol:
      return "scontrol";
    case ClientTool::kScancel:
      return "scancel";
  }
  return "squeue";
}

std::vector<std::string> SplitJobList(std::string_view list) {
  std::vector<std::string> out;
  std::string current;
  int depth = 0;
  for (const char c : list) {
    if (c == '[') ++depth;
    if (c == ']' && depth > 0) --depth;
    if (c == ',' && depth == 0) {
      if (!current.empty()) out.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  if (!current.empty()) out.push_back(current);
  return out;
}

bool ClustersAsTyped(const ClientCommand& cmd) {
  if (!cmd.clusters) return false;
  if (!cmd.ids.empty() || cmd.structured) return true;
  if (cmd.tool == ClientTool::kSqueue) return false;
  if (cmd.tool != ClientTool::kSacct) return true;
  return cmd.long_format && !cmd.format.empty();  // sacct refuses them together
}

namespace {

// Where an option's value is: args[index] from `prefix` on; index ==
// args.size() when an optional value was not given.
struct ValueAt {
  std::size_t index;
  std::size_t prefix;
};

// Reads one command line by its tool's grammar into a ClientCommand, noting
// the words the shim rewrites (ids, formats, headers).
class ClientCommandReader {
 public:
  ClientCommandReader(ClientTool tool, const std::vector<std::string>& args)
      : g_(GrammarOf(tool)), tool_(tool), args_(args) {
    cmd_.tool = tool;
  }

  // nullopt: a line this reader leaves to the real command (an option's
  // value missing, -h bundled).
  std::optional<ClientCommand> Read() {
    std::vector<std::size_t> operands;
    bool options_done = false;
    for (std::size_t i = 0; i < args_.size(); ++i) {
      const std::string& a = args_[i];
      if (options_done || a.size() < 2 || a[0] != '-') {
        operands.push_back(i);
      } else if (a == "--") {
        options_done = true;
      } else if (a.starts_with("--")) {
        if (!ReadLong(i)) return std::nullopt;
      } else if (!ReadShort(i)) {
        return std::nullopt;
      }
    }
    ReadOperands(operands);
    return std::move(cmd_);
  }

 private:
  bool Given(ValueAt v) const { return v.index < args_.size(); }
  std::string ValueOf(ValueAt v) const { return args_[v.index].substr(v.prefix); }

  void AddIds(std::size_t index, std::size_t prefix, std::size_t option) {
    cmd_.id_words.push_back({index, prefix, option});
    for (auto& id : SplitJobList(std::string_view(args_[index]).substr(prefix))) {
      cmd_.ids.push_back(id);
    }
  }

  void AddFormat(ValueAt v, std::size_t option, std::string& into) {
    into = ValueOf(v);
    cmd_.format_words.push_back(option);
    if (v.index != option) cmd_.format_words.push_back(v.index);
  }

  // A --long option; `i` moves past its value when that is the next word.
  bool ReadLong(std::size_t& i) {
    const std::string& a = args_[i];
    const std::size_t option = i;
    const auto eq = a.find('=');
    const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const bool takes = std::find(g_.long_with_value.begin(), g_.long_with_value.end(), name) !=
                       g_.long_with_value.end();
    ValueAt v{i, eq == std::string::npos ? 0 : eq + 1};
    const bool optional = name == "jobs" || name == "steps";  // squeue: --jobs[=list]
    if (takes && eq == std::string::npos) {
      if (optional && (i + 1 >= args_.size() || args_[i + 1].starts_with("-"))) {
        v.index = args_.size();  // none given
      } else {
        if (i + 1 >= args_.size()) return false;
        v = {++i, 0};
      }
    }
    const bool has_value = takes && Given(v);
    if (name == g_.ids_long && !g_.ids_long.empty() && has_value) AddIds(v.index, v.prefix, option);
    if (name == "noheader") {
      cmd_.noheader = true;
      cmd_.noheader_words.push_back(i);
    }
    if (name == "format" && has_value) AddFormat(v, option, cmd_.format);
    if (name == "Format") {
      cmd_.field_format = true;
      if (has_value) AddFormat(v, option, cmd_.field_format_spec);
    }
    if (name == "clusters" || name == "allclusters" || name == "federation") cmd_.clusters = true;
    if (name == "json" || name == "yaml") cmd_.structured = true;
    if (name == "json") cmd_.json = true;
    if (name == "yaml") cmd_.yaml_words.push_back(i);
    if (name == "help" || name == "usage" || name == "version" || name == "helpformat") {
      cmd_.about = true;
    }
    if (name == "long") {
      cmd_.long_format = true;
      cmd_.long_words.push_back(i);
    }
    if (name == "parsable" || name == "parsable2") cmd_.parsable = true;
    if (name == "steps") cmd_.steps = true;
    if ((name == "states" || name == "state") && tool_ == ClientTool::kSqueue) cmd_.states = true;
    if (name == "starttime" || name == "endtime") cmd_.window = true;
    return true;
  }

  // Short options, bundled as getopt reads them; `i` moves past a value
  // that is the next word.
  bool ReadShort(std::size_t& i) {
    const std::string& a = args_[i];
    for (std::size_t k = 1; k < a.size(); ++k) {
      const char c = a[k];
      if (g_.short_with_value.find(c) != std::string_view::npos) return ReadShortValue(i, k);
      if (c == g_.noheader && g_.noheader != 0) {
        if (a.size() != 2) return false;  // -h bundled: read by the real command alone
        cmd_.noheader = true;
        cmd_.noheader_words.push_back(i);
      }
      if (c == 'l') {
        cmd_.long_format = true;
        cmd_.long_words.push_back(i);
      }
      if (c == 'V' || (tool_ == ClientTool::kSacct && (c == 'h' || c == 'e'))) cmd_.about = true;
      if (tool_ == ClientTool::kSacct && (c == 'p' || c == 'P')) cmd_.parsable = true;
      if (tool_ == ClientTool::kSacct && c == 'L') cmd_.clusters = true;
    }
    return true;
  }

  // The short option at args_[i][k], which takes a value: the rest of the
  // word, or the next word.
  bool ReadShortValue(std::size_t& i, std::size_t k) {
    const std::string& a = args_[i];
    const std::size_t option = i;
    const char c = a[k];
    ValueAt v{i, k + 1};
    if (k + 1 >= a.size()) {
      const bool optional = tool_ == ClientTool::kSqueue && (c == 'j' || c == 's');
      if (optional && (i + 1 >= args_.size() || args_[i + 1].starts_with("-"))) {
        v.index = args_.size();
      } else {
        if (i + 1 >= args_.size()) return false;
        v = {i + 1, 0};
      }
    }
    const bool has_value = Given(v);
    if (c == g_.ids && has_value) AddIds(v.index, v.prefix, option);
    if (c == g_.format && has_value) AddFormat(v, option, cmd_.format);
    if (c == g_.field_format && g_.field_format != 0) {
      cmd_.field_format = true;
      if (has_value) AddFormat(v, option, cmd_.field_format_spec);
    }
    if (c == 'M') cmd_.clusters = true;
    if (tool_ == ClientTool::kSqueue && c == 's') cmd_.steps = true;
    if (tool_ == ClientTool::kSqueue && c == 't') cmd_.states = true;
    if (std::find(g_.window.begin(), g_.window.end(), c) != g_.window.end()) cmd_.window = true;
    if (v.index == i + 1) ++i;
    return true;
  }

  // scancel's job ids; scontrol's verb, object and the ids it names.
  void ReadOperands(const std::vector<std::size_t>& operands) {
    if (tool_ == ClientTool::kScancel) {
      for (const std::size_t i : operands) AddIds(i, 0, i);
      return;
    }
    if (tool_ != ClientTool::kScontrol || operands.empty()) return;
    cmd_.verb = Lower(args_[operands[0]]);
    if (cmd_.verb == "show" && operands.size() >= 2) {
      cmd_.object = Lower(args_[operands[1]]);
      if ((cmd_.object == "job" || cmd_.object == "jobs" || cmd_.object == "jobid") &&
          operands.size() >= 3) {
        AddIds(operands[2], 0, operands[2]);
      }
    } else if (IsIdVerb(cmd_.verb)) {
      for (std::size_t k = 1; k < operands.size(); ++k) AddIds(operands[k], 0, operands[k]);
    } else if (cmd_.verb == "update") {
      for (std::size_t k = 1; k < operands.size(); ++k) {
        const std::string& w = args_[operands[k]];
        const auto eq = w.find('=');
        if (eq == std::string::npos) continue;
        const std::string key = Lower(std::string_view(w).substr(0, eq));
        if (key == "jobid" || key == "job") AddIds(operands[k], eq + 1, operands[k]);
      }
    }
  }

  const Grammar& g_;
  const ClientTool tool_;
  const std::vector<std::string>& args_;
  ClientCommand cmd_;
};

}  // namespace

std::optional<ClientCommand> ParseClientCommand(ClientTool tool,
                                                const std::vector<std::string>& args) {
  return ClientCommandReader(tool, args).Read();
}

}  // namespace skyslurm
