// jsoncpp's reader as an error, never an exception: its CharReader throws
// (past its nesting limit, "Exceeded stackLimit") where a parse error is
// due, and a login node's or an API server's text may nest as deep as it
// likes. Every jsoncpp parse of what the outside world writes goes here.
#pragma once

#include <json/json.h>

#include <string>
#include <string_view>

namespace skyslurm {

// `text` into `*out`; false with `*errors` said when it is not one JSON
// value (`strict_root`: an object or an array). Never throws.
bool ReadJson(std::string_view text, Json::Value* out, std::string* errors,
              bool strict_root = false);

}  // namespace skyslurm
