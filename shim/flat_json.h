// The little JSON the shim speaks to skyslurmd (it links no JSON library):
// strings quoted for a request, and the top-level members of an answer.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "broker/util/json_string.h"

namespace skyslurm::shim {

// `s` as a JSON string, quotes included (util/json_string.h).
using skyslurm::JsonQuote;

// The top-level members of a JSON object whose values are strings (decoded),
// numbers (as written) or booleans ("true"/"false"); members holding objects,
// arrays or null are checked and left out. nullopt: not one well-formed
// JSON object.
std::optional<std::map<std::string, std::string>> ReadFlatJsonObject(std::string_view text);

}  // namespace skyslurm::shim
