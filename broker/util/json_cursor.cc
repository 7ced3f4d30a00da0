#include "broker/util/json_cursor.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <limits>

#include "broker/util/json_string.h"

namespace skyslurm {
namespace {

constexpr int kMaxDepth = 256;

}  // namespace

bool JsonCursor::Accept(std::string_view word) {
  if (static_cast<std::size_t>(end_ - p_) < word.size() ||
      std::memcmp(p_, word.data(), word.size()) != 0) {
    return false;
  }
  p_ += word.size();
  return true;
}

bool JsonCursor::Fail(const char* what) {
  if (failure_.empty()) failure_ = what;
  return false;
}

Status JsonCursor::Error(std::string_view what) const {
  return InvalidArgumentError(fmt::format("not valid JSON at byte {}: {}", p_ - begin_, what));
}

void JsonCursor::Space() {
  while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
}

// At a '"': the string's end (past the closing quote), found with memchr;
// a quote preceded by an odd run of backslashes is escaped.
bool JsonCursor::SkipString() {
  const char* q = p_ + 1;
  for (;;) {
    q = static_cast<const char*>(std::memchr(q, '"', static_cast<std::size_t>(end_ - q)));
    if (q == nullptr) return Fail("unterminated string");
    const char* b = q;
    while (b > p_ + 1 && b[-1] == '\\') --b;
    if (((q - b) & 1) == 0) break;
    ++q;
  }
  p_ = q + 1;
  return true;
}

// Skips one value of any kind, whatever it holds.
bool JsonCursor::SkipValue() {
  Space();
  if (p_ == end_) return Fail("a value was expected");
  const char c = *p_;
  if (c == '"') return SkipString();
  if (c != '{' && c != '[') {
    const char* start = p_;
    while (p_ < end_ && *p_ != ',' && *p_ != '}' && *p_ != ']' && *p_ != ' ' && *p_ != '\n' &&
           *p_ != '\r' && *p_ != '\t') {
      ++p_;
    }
    return p_ > start || Fail("a value was expected");
  }
  // A container: count the nesting outside strings. The closing brackets
  // must match their openers.
  char stack[kMaxDepth];
  int depth = 0;
  while (p_ < end_) {
    const char d = *p_;
    if (d == '"') {
      if (!SkipString()) return false;
      continue;
    }
    if (d == '{' || d == '[') {
      if (depth == kMaxDepth) return Fail("nested too deeply");
      stack[depth++] = d == '{' ? '}' : ']';
    } else if (d == '}' || d == ']') {
      if (depth == 0 || stack[depth - 1] != d) return Fail("a bracket does not match");
      if (--depth == 0) {
        ++p_;
        return true;
      }
    }
    ++p_;
  }
  return Fail("the text ends inside a value");
}

bool JsonCursor::Literal(std::string_view word) {
  if (static_cast<std::size_t>(end_ - p_) < word.size() ||
      std::memcmp(p_, word.data(), word.size()) != 0) {
    return Fail("an unknown literal");
  }
  p_ += word.size();
  return true;
}

// At a '"': the decoded string.
bool JsonCursor::Decode(std::string* out) {
  const JsonStringRead read =
      ReadJsonString(std::string_view(p_, static_cast<std::size_t>(end_ - p_)), out,
                     /*strict=*/false);
  p_ += read.end;
  return read.error == nullptr || Fail(read.error);
}

bool JsonCursor::Number(Json::Value* out) {
  const char* start = p_;
  bool integral = true;
  if (p_ < end_ && *p_ == '-') ++p_;
  while (p_ < end_) {
    const char c = *p_;
    if (c >= '0' && c <= '9') {
      ++p_;
    } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
      integral = false;
      ++p_;
    } else {
      break;
    }
  }
  if (p_ == start || (p_ - start == 1 && *start == '-')) return Fail("a bad number");
  if (integral) {
    if (*start == '-') {
      std::int64_t v = 0;
      auto r = std::from_chars(start, p_, v);
      if (r.ec == std::errc() && r.ptr == p_) {
        *out = Json::Value(static_cast<Json::Int64>(v));
        return true;
      }
    } else {
      std::uint64_t v = 0;
      auto r = std::from_chars(start, p_, v);
      if (r.ec == std::errc() && r.ptr == p_) {
        if (v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          *out = Json::Value(static_cast<Json::Int64>(v));
        } else {
          *out = Json::Value(static_cast<Json::UInt64>(v));
        }
        return true;
      }
    }
  }
  double d = 0;
  auto r = std::from_chars(start, p_, d);
  if (r.ptr != p_ || r.ec == std::errc::invalid_argument) return Fail("a bad number");
  *out = Json::Value(d);
  return true;
}

// One value by `mask` into *out.
bool JsonCursor::Build(const JsonMask& mask, int depth, Json::Value* out) {
  if (depth > kMaxDepth) return Fail("nested too deeply");
  Space();
  if (p_ == end_) return Fail("a value was expected");
  switch (*p_) {
    case '{': {
      ++p_;
      *out = Json::Value(Json::objectValue);
      Space();
      if (p_ < end_ && *p_ == '}') {
        ++p_;
        return true;
      }
      std::string key;
      for (;;) {
        Space();
        if (p_ == end_ || *p_ != '"') return Fail("a member name was expected");
        if (!Decode(&key)) return false;
        Space();
        if (p_ == end_ || *p_ != ':') return Fail("':' was expected");
        ++p_;
        if (const JsonMask* child = mask.Child(key)) {
          if (!Build(*child, depth + 1, &(*out)[key])) return false;
        } else if (!SkipValue()) {
          return false;
        }
        Space();
        if (p_ < end_ && *p_ == ',') {
          ++p_;
          continue;
        }
        if (p_ < end_ && *p_ == '}') {
          ++p_;
          return true;
        }
        return Fail("',' or '}' was expected");
      }
    }
    case '[': {
      ++p_;
      *out = Json::Value(Json::arrayValue);
      Space();
      if (p_ < end_ && *p_ == ']') {
        ++p_;
        return true;
      }
      for (;;) {
        if (!Build(mask, depth + 1, &out->append(Json::Value()))) return false;
        Space();
        if (p_ < end_ && *p_ == ',') {
          ++p_;
          continue;
        }
        if (p_ < end_ && *p_ == ']') {
          ++p_;
          return true;
        }
        return Fail("',' or ']' was expected");
      }
    }
    case '"': {
      std::string s;
      if (!Decode(&s)) return false;
      *out = Json::Value(std::move(s));
      return true;
    }
    case 't':
      *out = true;
      return Literal("true");
    case 'f':
      *out = false;
      return Literal("false");
    case 'n':
      *out = Json::Value();
      return Literal("null");
    default:
      return Number(out);
  }
}

// The public steps: each turns a helper's false into an error with its offset.

Status JsonCursor::Enter(char open, bool* present) {
  Space();
  if (p_ < end_ && *p_ == open) {
    ++p_;
    *present = true;
    return OkStatus();
  }
  *present = false;
  if (Accept("null")) return OkStatus();
  return Error(open == '{' ? "an object was expected" : "an array was expected");
}

Status JsonCursor::Key(bool first, std::string_view* key, bool* more) {
  Space();
  if (!first) {
    if (p_ < end_ && *p_ == ',') {
      ++p_;
      Space();
    } else if (p_ < end_ && *p_ == '}') {
      ++p_;
      *more = false;
      return OkStatus();
    } else {
      return Error("',' or '}' was expected");
    }
  } else if (p_ < end_ && *p_ == '}') {
    ++p_;
    *more = false;
    return OkStatus();
  }
  if (p_ == end_ || *p_ != '"') return Error("a member name was expected");
  // Most keys have no escapes: a view of the text itself.
  const char* start = p_ + 1;
  const char* q = start;
  while (q < end_ && *q != '"' && *q != '\\') ++q;
  if (q < end_ && *q == '"') {
    *key = std::string_view(start, static_cast<std::size_t>(q - start));
    p_ = q + 1;
  } else {
    if (!Decode(&key_)) return Error(failure_);
    *key = key_;
  }
  Space();
  if (p_ == end_ || *p_ != ':') return Error("':' was expected");
  ++p_;
  *more = true;
  return OkStatus();
}

Status JsonCursor::Element(bool first, bool* more) {
  Space();
  if (p_ < end_ && *p_ == ']') {
    ++p_;
    *more = false;
    return OkStatus();
  }
  if (!first) {
    if (p_ == end_ || *p_ != ',') return Error("',' or ']' was expected");
    ++p_;
  }
  *more = true;
  return OkStatus();
}

Status JsonCursor::String(std::string* out) {
  Space();
  if (p_ == end_) return Error("a value was expected");
  if (*p_ == '"') return Decode(out) ? OkStatus() : Error(failure_);
  if (*p_ == '{' || *p_ == '[') return Error("a scalar was expected");
  if (Accept("null")) {
    out->clear();
    return OkStatus();
  }
  const char* start = p_;
  if (!SkipValue()) return Error(failure_);
  out->assign(start, p_);
  return OkStatus();
}

Status JsonCursor::Int(std::int64_t* out) {
  Space();
  if (Accept("null")) {
    *out = 0;
    return OkStatus();
  }
  Json::Value v;
  if (p_ == end_ || !(*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) || !Number(&v)) {
    return Error(failure_.empty() ? "a number was expected" : failure_);
  }
  if (!v.isInt64()) return Error("an integer was expected");
  *out = v.asInt64();
  return OkStatus();
}

Status JsonCursor::Bool(bool* out) {
  Space();
  if (Accept("true")) {
    *out = true;
  } else if (Accept("false")) {
    *out = false;
  } else if (Accept("null")) {
    *out = false;
  } else {
    return Error("true or false was expected");
  }
  return OkStatus();
}

Status JsonCursor::Skip() { return SkipValue() ? OkStatus() : Error(failure_); }

Status JsonCursor::Raw(std::string_view* out) {
  Space();
  const char* start = p_;
  if (!SkipValue()) return Error(failure_);
  *out = std::string_view(start, static_cast<std::size_t>(p_ - start));
  return OkStatus();
}

Result<Json::Value> JsonCursor::Value(const JsonMask& mask) {
  Json::Value out;
  if (!Build(mask, 0, &out)) return Error(failure_);
  return out;
}

Status JsonCursor::End() {
  Space();
  return p_ == end_ ? OkStatus() : Error("text after the value");
}

}  // namespace skyslurm
