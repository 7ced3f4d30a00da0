#include "broker/util/line_diff.h"

#include <fmt/format.h>

namespace skyslurm {
namespace {

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

std::vector<DiffHunk> DiffLines(std::string_view old_text, std::string_view new_text) {
  const auto a = Lines(old_text), b = Lines(new_text);
  // Longest common subsequence table (scripts are small).
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m; j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::vector<DiffHunk> hunks;
  DiffHunk current;
  bool open = false;
  std::size_t first_old = 0;  // index in `a` where the open hunk starts
  auto close = [&] {
    if (open) {
      // Removed lines start at first_old; a pure insertion goes after it.
      current.old_line = static_cast<int>(first_old) + (current.removed.empty() ? 0 : 1);
      hunks.push_back(std::move(current));
    }
    current = DiffHunk();
    open = false;
  };
  auto start = [&](std::size_t at) {
    if (!open) {
      first_old = at;
      open = true;
    }
  };
  std::size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      close();
      ++i;
      ++j;
    } else if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      start(i);
      current.added.push_back(b[j++]);
    } else {
      start(i);
      current.removed.push_back(a[i++]);
    }
  }
  close();
  return hunks;
}

std::string FormatDiff(const std::vector<DiffHunk>& hunks, std::string_view indent) {
  std::string out;
  for (const auto& h : hunks) {
    out += fmt::format("{}@@ {} line {}\n", indent, h.removed.empty() ? "after" : "at", h.old_line);
    for (const auto& l : h.removed) out += fmt::format("{}-{}\n", indent, l);
    for (const auto& l : h.added) out += fmt::format("{}+{}\n", indent, l);
  }
  return out;
}

}  // namespace skyslurm
