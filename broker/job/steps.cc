#include "broker/job/steps.h"

#include <algorithm>
#include <optional>
#include <span>

#include "broker/job/argv_parser.h"
#include "broker/job/option_table.h"

namespace skyslurm::job {
namespace {

// The Slurm command a word runs, if any: srun or salloc, by name or path.
const OptionTable* CommandTable(const std::string& word) {
  static const OptionTable srun(Tool::kSrun);
  static const OptionTable salloc(Tool::kSalloc);
  const std::string_view base = std::string_view(word).substr(word.rfind('/') + 1);
  if (base == "srun") return &srun;
  if (base == "salloc") return &salloc;
  return nullptr;
}

// A command line's words as sh groups them: blanks and the control
// operators (; & | ( ) < >) separate, quotes group, a backslash escapes, a
// '#' that starts a word starts a comment. nullopt for an open quote (a
// command that goes on over lines, which is not read).
std::optional<std::vector<std::string>> ShellWords(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  auto end_word = [&] {
    if (in_word) words.push_back(std::move(word));
    word.clear();
    in_word = false;
  };
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r' ||
        std::string_view(";&|()<>").find(c) != std::string_view::npos) {
      end_word();
    } else if (c == '#' && !in_word) {
      break;
    } else if (c == '\\') {
      if (++i < line.size()) word += line[i];
      in_word = true;
    } else if (c == '\'' || c == '"') {
      const std::size_t close = line.find(c, i + 1);
      if (close == std::string_view::npos) return std::nullopt;
      word.append(line.substr(i + 1, close - i - 1));
      i = close;
      in_word = true;
    } else {
      word += c;
      in_word = true;
    }
  }
  end_word();
  return words;
}

}  // namespace

std::vector<StepPluginOption> FindStepPluginOptions(std::string_view script, int from_line) {
  std::vector<StepPluginOption> found;
  int number = 0;
  std::size_t start = 0;
  while (start < script.size()) {
    std::size_t end = script.find('\n', start);
    if (end == std::string_view::npos) end = script.size();
    const std::string_view line = script.substr(start, end - start);
    start = end + 1;
    if (++number < from_line) continue;
    const auto words = ShellWords(line);
    if (!words) continue;
    for (std::size_t i = 0; i < words->size(); ++i) {
      const OptionTable* table = CommandTable((*words)[i]);
      if (table == nullptr) continue;
      const std::span<const std::string> rest(words->data() + i + 1, words->size() - i - 1);
      auto parsed = ParseArgs(*table, rest, OperandPolicy::kStopAtFirst, "");
      if (!parsed.ok()) continue;
      for (const Occurrence& o : parsed->options) {
        if (o.spec != nullptr) continue;
        const bool seen = std::any_of(found.begin(), found.end(), [&](const StepPluginOption& f) {
          return f.line == number && f.name == o.name;
        });
        if (!seen) {
          found.push_back(
              {number, std::string((*words)[i].substr((*words)[i].rfind('/') + 1)), o.name});
        }
      }
    }
  }
  return found;
}

}  // namespace skyslurm::job
