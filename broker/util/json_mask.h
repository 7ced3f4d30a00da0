// Reading only the parts of a JSON text that are wanted. A Kubernetes pod is
// about 3 KB of JSON of which the inventory reads a few hundred bytes; a
// cluster of 50,000 pods is 150 MB a probe must get through in well under a
// second. A JsonMask names the members to keep (dotted paths; arrays on the
// way are passed through, the rest of the path applies to each element);
// ParseMasked builds a Json::Value of those alone and skips the rest at the
// speed of a scan (memchr for string ends), never building it.
//
// Skipped values are scanned for their extent, not validated: a malformed
// number or literal inside a skipped member goes unnoticed; broken nesting or
// an unterminated string anywhere is an error, with the byte offset.
#pragma once

#include <json/json.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm {

class JsonMask {
 public:
  // Keeps nothing (an object of no members, an array of empty objects).
  JsonMask() = default;
  // Keeps every value whole.
  static JsonMask All();
  // Keeps the members `paths` name ("metadata.name", "spec.containers.resources"),
  // each with its whole value.
  static JsonMask Of(std::initializer_list<std::string_view> paths);

  // Adds one dotted path (a path under one already kept whole adds nothing).
  JsonMask& Add(std::string_view path);
  // Keeps member `key` by `child`'s mask.
  JsonMask& With(std::string_view key, JsonMask child);

  bool keeps_all() const { return all_; }
  // The mask for member `key`; null when it is dropped.
  const JsonMask* Child(std::string_view key) const;

 private:
  bool all_ = false;
  std::vector<std::pair<std::string, JsonMask>> children_;  // few: a linear search
};

// Parses `text` (one JSON value, whitespace around it allowed), keeping what
// `mask` names. An object member the mask drops is absent from the result; a
// kept object keeps its members' order of no importance (Json::Value sorts).
// Numbers become what Json::Reader makes of them.
Result<Json::Value> ParseMasked(std::string_view text, const JsonMask& mask);

// The same selection from a value already parsed (a watch event's object).
Json::Value Masked(const Json::Value& value, const JsonMask& mask);

}  // namespace skyslurm
