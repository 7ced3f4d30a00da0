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

std::optional<ClientCommand> ParseClientCommand(ClientTool tool,
                                                const std::vector<std::string>& args) {
  const Grammar& g = GrammarOf(tool);
  ClientCommand cmd;
  cmd.tool = tool;
  auto add_ids = [&](std::size_t index, std::size_t prefix, std::size_t option) {
    cmd.id_words.push_back({index, prefix, option});
    for (auto& id : SplitJobList(std::string_view(args[index]).substr(prefix))) {
      cmd.ids.push_back(id);
    }
  };
  std::vector<std::size_t> operands;
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_done || a.size() < 2 || a[0] != '-') {
      operands.push_back(i);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    const std::size_t option_index = i;
    if (a.starts_with("--")) {
      const auto eq = a.find('=');
      const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const bool takes = std::find(g.long_with_value.begin(), g.long_with_value.end(), name) !=
                         g.long_with_value.end();
      std::size_t value_index = i;
      std::size_t value_prefix = eq == std::string::npos ? 0 : eq + 1;
      const bool optional = name == "jobs" || name == "steps";  // squeue: --jobs[=list]
      if (takes && eq == std::string::npos) {
        if (optional && (i + 1 >= args.size() || args[i + 1].starts_with("-"))) {
          value_index = args.size();  // none given
        } else {
          if (i + 1 >= args.size()) return std::nullopt;
          value_index = ++i;
          value_prefix = 0;
        }
      }
      const bool has_value = takes && value_index < args.size();
      if (name == g.ids_long && !g.ids_long.empty() && has_value) {
        add_ids(value_index, value_prefix, option_index);
      }
      if (name == "noheader") {
        cmd.noheader = true;
        cmd.noheader_words.push_back(i);
      }
      if (name == "format" && has_value) {
        cmd.format = args[value_index].substr(value_prefix);
        cmd.format_words.push_back(option_index);
        if (value_index != option_index) cmd.format_words.push_back(value_index);
      }
      if (name == "Format") {
        cmd.field_format = true;
        if (has_value) {
          cmd.field_format_spec = args[value_index].substr(value_prefix);
          cmd.format_words.push_back(option_index);
          if (value_index != option_index) cmd.format_words.push_back(value_index);
        }
      }
      if (name == "clusters" || name == "allclusters" || name == "federation") cmd.clusters = true;
      if (name == "json" || name == "yaml") cmd.structured = true;
      if (name == "json") cmd.json = true;
      if (name == "yaml") cmd.yaml_words.push_back(i);
      if (name == "help" || name == "usage" || name == "version" || name == "helpformat") {
        cmd.about = true;
      }
      if (name == "long") {
        cmd.long_format = true;
        cmd.long_words.push_back(i);
      }
      if (name == "parsable" || name == "parsable2") cmd.parsable = true;
      if (name == "steps") cmd.steps = true;
      if ((name == "states" || name == "state") && tool == ClientTool::kSqueue) cmd.states = true;
      if (name == "starttime" || name == "endtime") cmd.window = true;
      continue;
    }
    // Short options, bundled as getopt reads them.
    for (std::size_t k = 1; k < a.size(); ++k) {
      const char c = a[k];
      if (g.short_with_value.find(c) != std::string_view::npos) {
        std::size_t value_index = i;
        std::size_t value_prefix = k + 1;
        if (k + 1 >= a.size()) {
          const bool optional = tool == ClientTool::kSqueue && (c == 'j' || c == 's');
          if (optional && (i + 1 >= args.size() || args[i + 1].starts_with("-"))) {
            value_index = args.size();
          } else {
            if (i + 1 >= args.size()) return std::nullopt;
            value_index = i + 1;
            value_prefix = 0;
          }
        }
        const bool has_value = value_index < args.size();
        if (c == g.ids && has_value) add_ids(value_index, value_prefix, option_index);
        if (c == g.format && has_value) {
          cmd.format = args[value_index].substr(value_prefix);
          cmd.format_words.push_back(option_index);
          if (value_index != option_index) cmd.format_words.push_back(value_index);
        }
        if (c == g.field_format && g.field_format != 0) {
          cmd.field_format = true;
          if (has_value) {
            cmd.field_format_spec = args[value_index].substr(value_prefix);
            cmd.format_words.push_back(option_index);
            if (value_index != option_index) cmd.format_words.push_back(value_index);
          }
        }
        if (c == 'M') cmd.clusters = true;
        if (tool == ClientTool::kSqueue && c == 's') cmd.steps = true;
        if (tool == ClientTool::kSqueue && c == 't') cmd.states = true;
        if (std::find(g.window.begin(), g.window.end(), c) != g.window.end()) cmd.window = true;
        if (value_index == i + 1) ++i;
        break;  // the rest of the word was the value
      }
      if (c == g.noheader && g.noheader != 0) {
        cmd.noheader = true;
        if (a.size() == 2)
          cmd.noheader_words.push_back(i);
        else
          return std::nullopt;  // -h bundled: read by the real command alone
      }
      if (c == 'l') {
        cmd.long_format = true;
        cmd.long_words.push_back(i);
      }
      if (c == 'V' || (tool == ClientTool::kSacct && (c == 'h' || c == 'e'))) cmd.about = true;
      if (tool == ClientTool::kSacct && (c == 'p' || c == 'P')) cmd.parsable = true;
      if (tool == ClientTool::kSacct && c == 'L') cmd.clusters = true;
    }
  }
  if (tool == ClientTool::kScancel) {
    for (const std::size_t i : operands) add_ids(i, 0, i);
  } else if (tool == ClientTool::kScontrol && !operands.empty()) {
    cmd.verb = Lower(args[operands[0]]);
    if (cmd.verb == "show" && operands.size() >= 2) {
      cmd.object = Lower(args[operands[1]]);
      if ((cmd.object == "job" || cmd.object == "jobs" || cmd.object == "jobid") &&
          operands.size() >= 3) {
        add_ids(operands[2], 0, operands[2]);
      }
    } else if (IsIdVerb(cmd.verb)) {
      for (std::size_t k = 1; k < operands.size(); ++k) add_ids(operands[k], 0, operands[k]);
    } else if (cmd.verb == "update") {
      for (std::size_t k = 1; k < operands.size(); ++k) {
        const std::string& w = args[operands[k]];
        const auto eq = w.find('=');
        if (eq == std::string::npos) continue;
        const std::string key = Lower(std::string_view(w).substr(0, eq));
        if (key == "jobid" || key == "job") add_ids(operands[k], eq + 1, operands[k]);
      }
    }
  }
  return cmd;
}

}  // namespace skyslurm
