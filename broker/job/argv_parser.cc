#include "broker/job/argv_parser.h"

#include <fmt/format.h>

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
    return InvalidArgumentError(fmt::format("{}:{}: {}", where.source, where.line, message));
  }
  return InvalidArgumentError(where.source.empty() ? message
                                                   : fmt::format("{}: {}", where.source, message));
}

}  // namespace

Result<ParsedArgs> ParseArgs(const OptionTable& table, std::span<const std::string> args,
                             OperandPolicy policy, std::string_view source, int line) {
  const Where where{source, line};
  ParsedArgs parsed;
  std::size_t i = 0;
  auto take_operands = [&](std::size_t from) {
    for (std::size_t k = from; k < args.size(); ++k) parsed.operands.push_back(args[k]);
  };
  while (i < args.size()) {
    const std::string& word = args[i];
    if (word == ":") {  // heterogeneous job separator (sbatch -N1 : -N2 job.sh)
      parsed.het_separator = true;
      ++i;
      continue;
    }
    if (word == "--") {
      if (policy == OperandPolicy::kReject && i + 1 < args.size()) {
        return ArgError(where, fmt::format("invalid directive: '{}'", args[i + 1]));
      }
      take_operands(i + 1);
      return parsed;
    }
    if (word.size() < 2 || word[0] != '-') {
      if (policy == OperandPolicy::kReject) {
        return ArgError(where, fmt::format("invalid directive: '{}' is not an option", word));
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
        for (auto candidate : match.ambiguous) possibilities += fmt::format(" '--{}'", candidate);
        return ArgError(where, fmt::format("option '--{}' is ambiguous; possibilities:{}", name,
                                           possibilities));
      }
      if (match.spec == nullptr) {
        // A site's SPANK option we were not told about: keep it verbatim.
        occ.name = name;
        if (eq != std::string::npos) occ.value = body.substr(eq + 1);
        parsed.warnings.push_back(fmt::format(
            "unknown option '--{}' kept as written (if it takes a value, write --{}=VALUE)", name,
            name));
        parsed.options.push_back(std::move(occ));
        ++i;
        continue;
      }
      occ.spec = match.spec;
      occ.name = std::string(match.spec->name);
      switch (match.spec->arg) {
        case Arg::kNone:
          if (eq != std::string::npos) {
            return ArgError(where, fmt::format("option '--{}' doesn't allow an argument",
                                               match.spec->name));
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
            return ArgError(where,
                            fmt::format("option '--{}' requires an argument", match.spec->name));
          }
          break;
      }
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
      if (spec == nullptr) return ArgError(where, fmt::format("invalid option -- '{}'", c));
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
            return ArgError(where, fmt::format("option requires an argument -- '{}'", c));
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
      parsed.options.push_back(std::move(occ));
    }
    i += consumed_next ? 2 : 1;
  }
  return parsed;
}

}  // namespace skyslurm::job
