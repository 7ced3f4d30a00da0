// Small string helpers shared across the broker.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace skyslurm {

// "a,b,,c" -> a, b, c (empty items dropped).
std::vector<std::string> SplitList(std::string_view text, char separator = ',');
// The number `text` begins with (its leading optional minus and digits), 0
// when it begins with none: a field of Slurm's output read leniently.
std::int64_t LeadingInt(std::string_view text);
// Without leading and trailing blanks (spaces, tabs, newlines).
std::string Trim(std::string_view text);
// ASCII lower case.
std::string Lower(std::string_view text);
// Of `words`, the one closest to `word` by edit distance (case-insensitive),
// for "did you mean": "" when none is within `max_distance` edits.
std::string Nearest(std::string_view word, const std::vector<std::string_view>& words,
                    std::size_t max_distance = 3);

// The length of `text`'s longest prefix that does not end inside a UTF-8
// character: a log read in pieces is cut between characters, so that none
// arrives as two halves (each of which JSON would turn into U+FFFD).
std::size_t Utf8WholePrefix(std::string_view text);

}  // namespace skyslurm
