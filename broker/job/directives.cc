#include "broker/job/directives.h"

#include <fmt/format.h>

#include <cctype>

namespace skyslurm::job {
namespace {

bool IsBlank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// "hetjob" or "packjob", case-insensitively, as a whole word at the start.
bool StartsWithSeparator(std::string_view text) {
  for (std::string_view word : {std::string_view("hetjob"), std::string_view("packjob")}) {
    if (text.size() < word.size()) continue;
    bool same = true;
    for (std::size_t k = 0; k < word.size(); ++k) {
      if (std::tolower(static_cast<unsigned char>(text[k])) != word[k]) same = false;
    }
    if (same && (text.size() == word.size() || IsBlank(text[word.size()]))) return true;
  }
  return false;
}

}  // namespace

Result<std::vector<std::string>> SplitDirectiveWords(std::string_view text, std::string_view file,
                                                     int line) {
  std::vector<std::string> words;
  std::size_t p = 0;
  while (true) {
    while (p < text.size() && IsBlank(text[p])) ++p;
    if (p >= text.size()) break;
    if (text[p] == ':') {
      return InvalidArgumentError(fmt::format("{}:{}: unexpected ':' in '{}'", file, line, text));
    }
    std::string word;
    bool escaped = false;
    char quote = 0;
    while (p < text.size() && (quote != 0 || !IsBlank(text[p]))) {
      const char c = text[p];
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
        ++p;
        continue;
      } else if (quote != 0) {
        if (c == quote) {
          quote = 0;
          ++p;
          continue;
        }
      } else if (c == '"' || c == '\'') {
        quote = c;
        ++p;
        continue;
      } else if (c == '#') {
        p = text.size();  // an unquoted '#': the rest is a comment
        break;
      }
      word += c;
      ++p;
    }
    if (quote != 0) {
      return InvalidArgumentError(
          fmt::format("{}:{}: unmatched {} in '{}'", file, line, quote == '"' ? "'\"'" : "\"'\"",
                      text));
    }
    // A word that ends up empty ("" alone, or a comment) ends the line for
    // sbatch: nothing after it is read.
    if (word.empty()) break;
    words.push_back(std::move(word));
  }
  return words;
}

Result<DirectiveScan> ScanDirectives(std::string_view script, std::string_view file) {
  DirectiveScan scan;
  int line_no = 0;
  bool warned_slurm = false;
  std::size_t start = 0;
  bool stopped = false;
  while (start < script.size()) {
    std::size_t end = script.find('\n', start);
    if (end == std::string_view::npos) end = script.size();
    const std::string_view line = script.substr(start, end - start);
    start = end + 1;
    ++line_no;

    std::string_view magic;
    if (line.starts_with("#SBATCH")) {
      magic = "#SBATCH";
    } else if (line.starts_with("#SLURM")) {
      magic = "#SLURM";
      if (!warned_slurm) {
        scan.warnings.push_back(fmt::format(
            "{}:{}: '#SLURM' is deprecated; sbatch asks to use '#SBATCH'", file, line_no));
        warned_slurm = true;
      }
    } else {
      const auto first = line.find_first_not_of(" \t\r\f\v");
      if (first != std::string_view::npos && line[first] != '#') {
        scan.body_start_line = line_no;
        stopped = true;
        break;
      }
      continue;
    }

    std::string_view rest = line.substr(magic.size());
    while (!rest.empty() && IsBlank(rest.front())) rest.remove_prefix(1);
    Directive directive;
    directive.line = line_no;
    directive.text = std::string(line);
    directive.magic = std::string(magic);
    if (StartsWithSeparator(rest)) {
      directive.het_separator = true;
      scan.hetjob = true;
      rest.remove_prefix(rest.starts_with('h') || rest.starts_with('H') ? 6 : 7);
    }
    SKY_ASSIGN_OR_RETURN(directive.words, SplitDirectiveWords(rest, file, line_no));
    scan.directives.push_back(std::move(directive));
  }
  if (!stopped) scan.body_start_line = line_no + 1;
  return scan;
}

}  // namespace skyslurm::job
