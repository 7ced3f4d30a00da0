// A pull reader over one JSON text, for the hot paths where building a tree
// costs more than the answer is worth (50,000 pods of 3 KB each): the caller
// walks objects member by member and arrays element by element, reads the
// few values it wants straight into its own structs, and skips the rest at
// the speed of a scan (memchr for string ends; nesting counted, not parsed).
//
// Skipped values are scanned for their extent, not validated: a malformed
// number or literal inside a skipped value goes unnoticed; broken nesting or
// an unterminated string anywhere is an error. Every error names its byte
// offset. Null is read as absent: an empty object or array, "" or 0. In
// strict mode strings, numbers and literals are read as RFC 8259 writes
// them, and Check() validates a value whole.
//
// The one JSON reader of the project: standard library only, so that the
// shim's front reads skyslurmd's answers with it too (ReadFlatJsonObject);
// building a tree of what a mask keeps (Value) needs jsoncpp and is in
// json_mask.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "broker/util/status.h"

namespace Json {
class Value;
}

namespace skyslurm {

class JsonMask;

class JsonCursor {
 public:
  enum class Mode { kFast, kStrict };
  explicit JsonCursor(std::string_view text, Mode mode = Mode::kFast)
      : p_(text.data()),
        begin_(text.data()),
        end_(text.data() + text.size()),
        strict_(mode == Mode::kStrict) {}

  // At an object (or null): `member(key)` for each member, which must read
  // or Skip the member's value. `key` is valid until the cursor moves on.
  template <typename F>
  Status Object(F&& member) {
    bool present = false;
    SKY_RETURN_IF_ERROR(Enter('{', &present));
    if (!present) return OkStatus();
    std::string_view key;
    bool more = false;
    SKY_RETURN_IF_ERROR(Key(/*first=*/true, &key, &more));
    while (more) {
      SKY_RETURN_IF_ERROR(member(key));
      if (stopped_) return OkStatus();
      SKY_RETURN_IF_ERROR(Key(/*first=*/false, &key, &more));
    }
    return OkStatus();
  }
  // At an array (or null): `element()` for each element, which must read or
  // Skip it.
  template <typename F>
  Status Array(F&& element) {
    bool present = false;
    SKY_RETURN_IF_ERROR(Enter('[', &present));
    if (!present) return OkStatus();
    bool more = false;
    SKY_RETURN_IF_ERROR(Element(/*first=*/true, &more));
    while (more) {
      SKY_RETURN_IF_ERROR(element());
      if (stopped_) return OkStatus();
      SKY_RETURN_IF_ERROR(Element(/*first=*/false, &more));
    }
    return OkStatus();
  }

  // A scalar as text: a string decoded, a number or true/false as written,
  // null as "". An object or array is an error.
  Status String(std::string* out);
  // An integer (a number without fraction or exponent; null is 0).
  Status Int(std::int64_t* out);
  // true or false (null is false).
  Status Bool(bool* out);
  // Passes over one value.
  Status Skip();
  // Passes over one value, checking it is well-formed JSON throughout.
  Status Check();
  // The next character that is not white space ('\0' at the end).
  char Peek();
  // Passes over one value and gives its text.
  Status Raw(std::string_view* out);
  // One value built as a tree, keeping what `mask` names (json_mask.cc).
  Result<Json::Value> Value(const JsonMask& mask);
  // Only whitespace is left.
  Status End();
  // Ends the walk where it is (a list's head read, the rest left unscanned):
  // every Object and Array under way returns at once; read nothing after.
  void Stop() { stopped_ = true; }

 private:
  Status Enter(char open, bool* present);
  Status Key(bool first, std::string_view* key, bool* more);
  Status Element(bool first, bool* more);
  Status Error(std::string_view what) const;
  void Space();
  bool SkipString();
  bool SkipValue();
  bool Decode(std::string* out);
  bool Literal(std::string_view word);
  // At a 't', 'f' or 'n': true, false or null, as its first letter says.
  bool LiteralAt();
  // Passes over `word` if it is next (no failure recorded when not).
  bool Accept(std::string_view word);
  bool Fail(const char* what);
  bool CheckNumber();
  bool CheckValue(int depth);
  bool CheckContainer(int depth);
  // json_mask.cc (jsoncpp).
  bool Number(Json::Value* out);
  bool Build(const JsonMask& mask, int depth, Json::Value* out);

  const char* p_;
  const char* begin_;
  const char* end_;
  std::string failure_;  // what a false-returning helper met
  std::string key_;      // an escaped key, decoded
  bool stopped_ = false;
  bool strict_ = false;
};

// The top-level members of a JSON object whose values are strings (decoded),
// numbers (as written) or booleans ("true"/"false"); members holding
// objects, arrays or null are checked and left out. nullopt: not one
// well-formed JSON object (RFC 8259). What the shim reads of skyslurmd's
// answers.
std::optional<std::map<std::string, std::string>> ReadFlatJsonObject(std::string_view text);

}  // namespace skyslurm
