#include "broker/job/argv_parser.h"

#include <algorithm>
#include <string>

namespace skyslurm::job {
namespace {

// Formatted only when there is an error: directives are parsed by the
// hundred thousand per second.
struct Where {
  std::string_view source;
  int line;
};

Status ArgError(const Where& where, std::string message) {
  if (where.line > 0) {
    return InvalidArgumentError(std::string(where.source) + ":" + std::to_string(where.line) +
                                ": " + message);
  }
  return InvalidArgumentError(where.source.empty() ? message
                                                   : std::string(where.source) + ": " + message);
}

}  // namespace

Result<ParsedArgs> ParseArgs(const OptionTable& table, std::span<const std::string> args,
                             OperandPolicy policy, std::string_view source, int line) {
  const Where where{source, line};
  ParsedArgs parsed;
  std::size_t i = 0;
  int component = 0;  // the heterogeneous job component, counted by ':'
  auto take_operands = [&](std::size_t from) {
    for (std::size_t k = from; k < args.size(); ++k) parsed.operands.push_back(args[k]);
  };
  while (i < args.size()) {
    const std::string& word = args[i];
    if (word == ":") {  // heterogeneous job separator (sbatch -N1 : -N2 job.sh)
      parsed.het_separator = true;
      ++component;
      ++i;
      continue;
    }
    if (word == "--") {
      if (policy == OperandPolicy::kReject && i + 1 < args.size()) {
        return ArgError(where, "invalid directive: '" + args[i + 1] + "'");
      }
      take_operands(i + 1);
      return parsed;
    }
    if (word.size() < 2 || word[0] != '-') {
      if (policy == OperandPolicy::kReject) {
        return ArgError(where, "invalid directive: '" + word + "' is not an option");
      }
      take_operands(i);
      return parsed;
    }

    if (word[1] == '-') {  // --long[=value]
      const std::string body = word.substr(2);
      const auto eq = body.find('=');
      const std::string name = body.substr(0, eq);
      const auto match = table.FindLong(name);
      Occurrence occ;
      occ.first_word = i;
      occ.words.push_back(word);
      if (!match.ambiguous.empty()) {
        std::string possibilities;
        for (auto candidate : match.ambiguous) {
          possibilities += " '--" + std::string(candidate) + "'";
        }
        return ArgError(where,
                        "option '--" + name + "' is ambiguous; possibilities:" + possibilities);
      }
      if (match.spec == nullptr) {
        // None of Slurm's: a SPANK plugin's option (pyxis' --container-image),
        // kept verbatim; each cluster's translation says whether its sbatch
        // takes it. In a directive, which has no operands, a word that
        // follows and is no option can only be its value.
        occ.name = name;
        if (eq != std::string::npos) {
          occ.value = body.substr(eq + 1);
        } else if (policy == OperandPolicy::kReject && i + 1 < args.size() &&
                   !args[i + 1].starts_with("-")) {
          occ.value = args[++i];
          occ.words.push_back(*occ.value);
        }
        parsed.warnings.push_back(
            "option '--" + name +
            "' is none of Slurm's (a SPANK plugin's?): kept as written, for the clusters whose "
            "sbatch recognises it" +
            (eq == std::string::npos && policy != OperandPolicy::kReject
                 ? " (if it takes a value, write --" + name + "=VALUE)"
                 : ""));
        occ.component = component;
        parsed.options.push_back(std::move(occ));
        ++i;
        continue;
      }
      occ.spec = match.spec;
      occ.name = std::string(match.spec->name);
      switch (match.spec->arg) {
        case Arg::kNone:
          if (eq != std::string::npos) {
            return ArgError(where, "option '--" + std::string(match.spec->name) +
                                       "' doesn't allow an argument");
          }
          break;
        case Arg::kOptional:
          if (eq != std::string::npos) occ.value = body.substr(eq + 1);
          break;
        case Arg::kRequired:
          if (eq != std::string::npos) {
            occ.value = body.substr(eq + 1);
          } else if (i + 1 < args.size()) {
            occ.value = args[++i];
            occ.words.push_back(*occ.value);
          } else {
            return ArgError(
                where, "option '--" + std::string(match.spec->name) + "' requires an argument");
          }
          break;
      }
      occ.component = component;
      parsed.options.push_back(std::move(occ));
      ++i;
      continue;
    }

    // -abc: short options, possibly bundled; one taking an argument ends the
    // word (its argument is the rest of the word, or the next word).
    const std::size_t word_index = i;
    std::vector<Occurrence> in_word;
    std::size_t pos = 1;
    bool consumed_next = false;
    while (pos < word.size()) {
      const char c = word[pos];
      const OptionSpec* spec = table.FindShort(c);
      if (spec == nullptr) return ArgError(where, std::string("invalid option -- '") + c + "'");
      Occurrence occ;
      occ.spec = spec;
      occ.name = std::string(spec->name);
      occ.first_word = word_index;
      ++pos;
      if (spec->arg != Arg::kNone) {
        if (pos < word.size()) {
          occ.value = word.substr(pos);
        } else if (spec->arg == Arg::kRequired) {
          if (i + 1 >= args.size()) {
            return ArgError(where, std::string("option requires an argument -- '") + c + "'");
          }
          occ.value = args[i + 1];
          consumed_next = true;
        }
        pos = word.size();
      }
      in_word.push_back(std::move(occ));
    }
    for (auto& occ : in_word) {
      occ.words.push_back(word);
      if (consumed_next) occ.words.push_back(args[i + 1]);
      occ.bundled = in_word.size() > 1;
      occ.component = component;
      parsed.options.push_back(std::move(occ));
    }
    i += consumed_next ? 2 : 1;
  }
  return parsed;
}

std::vector<std::string> RemoveOptions(const OptionTable& table,
                                       const std::vector<std::string>& words,
                                       const std::vector<Opt>& ids) {
  return RemoveOptionsIf(table, words, [&](const Occurrence& o) {
    return o.spec != nullptr && std::find(ids.begin(), ids.end(), o.spec->id) != ids.end();
  });
}

std::vector<std::string> RemoveOptionsIf(const OptionTable& table,
                                         const std::vector<std::string>& words,
                                         const std::function<bool(const Occurrence&)>& drop) {
  auto parsed = ParseArgs(table, words, OperandPolicy::kStopAtFirst, "");
  if (!parsed.ok()) return words;
  std::vector<std::string> out;
  for (std::size_t i = 0; i < parsed->options.size();) {
    // Occurrences sharing their words (bundled short options) go together.
    std::size_t j = i + 1;
    while (j < parsed->options.size() && parsed->options[j].bundled &&
           parsed->options[j].first_word == parsed->options[i].first_word) {
      ++j;
    }
    bool any_dropped = false;
    for (std::size_t k = i; k < j; ++k) any_dropped = any_dropped || drop(parsed->options[k]);
    if (!any_dropped) {
      const auto& w = parsed->options[i].words;
      out.insert(out.end(), w.begin(), w.end());
    } else {
      for (std::size_t k = i; k < j; ++k) {
        const Occurrence& o = parsed->options[k];
        if (drop(o)) continue;
        out.push_back(o.value ? "--" + o.name + "=" + *o.value : "--" + o.name);
      }
    }
    i = j;
  }
  // A script whose name starts with '-' came after "--": it still does.
  if (!parsed->operands.empty() && parsed->operands.front().starts_with("-")) out.push_back("--");
  out.insert(out.end(), parsed->operands.begin(), parsed->operands.end());
  return out;
}

}  // namespace skyslurm::job
