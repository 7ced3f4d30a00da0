// Small string helpers shared across the broker.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace skyslurm {

// "a,b,,c" -> a, b, c (empty items dropped).
std::vector<std::string> SplitList(std::string_view text, char separator = ',');
// Without leading and trailing blanks (spaces, tabs, newlines).
std::string Trim(std::string_view text);
// ASCII lower case.
std::string Lower(std::string_view text);

}  // namespace skyslurm
