// A line diff for showing a translation: which lines of the original were
// replaced by which lines, in hunks (no context lines).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace skyslurm {

struct DiffHunk {
  int old_line = 0;  // 1-based first line in the old text (0 when inserting at the top)
  std::vector<std::string> removed;
  std::vector<std::string> added;
};

std::vector<DiffHunk> DiffLines(std::string_view old_text, std::string_view new_text);

// "@@ line N" headers with "-"/"+" lines, each line prefixed by `indent`.
std::string FormatDiff(const std::vector<DiffHunk>& hunks, std::string_view indent);

}  // namespace skyslurm
