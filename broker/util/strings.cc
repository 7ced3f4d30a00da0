#include "broker/util/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace skyslurm {

std::vector<std::string> SplitList(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) parts.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::int64_t LeadingInt(std::string_view text) {
  std::int64_t v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

std::string Trim(std::string_view text) {
  const auto b = text.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  const auto e = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(b, e - b + 1));
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Nearest(std::string_view word, const std::vector<std::string_view>& words,
                    std::size_t max_distance) {
  const std::string a = Lower(word);
  std::string best;
  std::size_t best_distance = max_distance + 1;
  for (const std::string_view w : words) {
    // Levenshtein distance over one row: the words are short.
    const std::string b = Lower(w);
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    if (row[b.size()] < best_distance) {
      best_distance = row[b.size()];
      best = std::string(w);
    }
  }
  return best;
}

std::size_t Utf8WholePrefix(std::string_view text) {
  // Back over at most 3 continuation bytes to the start of the last
  // character; keep it only if all its bytes are there.
  std::size_t start = text.size();
  for (int back = 0; back < 4 && start > 0; ++back) {
    const auto c = static_cast<unsigned char>(text[start - 1]);
    --start;
    if ((c & 0xC0) != 0x80) {  // not a continuation byte: the character's first
      const std::size_t need = c < 0x80             ? 1
                               : (c & 0xE0) == 0xC0 ? 2
                               : (c & 0xF0) == 0xE0 ? 3
                               : (c & 0xF8) == 0xF0 ? 4
                                                    : 1;  // invalid: as it is
      return text.size() - start >= need ? text.size() : start;
    }
  }
  return text.size();  // only continuation bytes (not UTF-8): as it is
}

}  // namespace skyslurm
