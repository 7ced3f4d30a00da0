// JSON string literals, read by every JSON reader of ours: the cursor
// (json_cursor.h, whose flat reader the shim front uses too), which must
// stay free of libraries. Standard library only.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace skyslurm {

struct JsonStringRead {
  // Past the closing quote; or, on an error, where it was met.
  std::size_t end = 0;
  // Why the text is no string literal (null when it is one).
  const char* error = nullptr;
};

// `text` starts at a string's opening quote: its value decoded into *out
// (escapes, and \u escapes as UTF-8, surrogate pairs joined; a lone
// surrogate is an error). Raw control characters are refused when `strict`
// (RFC 8259) and kept otherwise.
JsonStringRead ReadJsonString(std::string_view text, std::string* out, bool strict);

// `s` as a JSON string literal (quotes, \\, \n, \r, \t; other control
// characters and DEL as \u00XX). Also a YAML double-quoted scalar.
std::string JsonQuote(std::string_view s);

}  // namespace skyslurm
