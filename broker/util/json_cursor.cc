#include "broker/util/json_cursor.h"

#include <charconv>
#include <cstring>
#include <limits>
#include <map>
#include <optional>

#include "broker/util/json_string.h"

namespace skyslurm {
namespace {

// A JSON number (RFC 8259's grammar, checked before) that is a whole
// int64: "12", "-3", "2.0", "1e3", "1.5e1". Exact, in integers: no floating
// point (which would round "9007199254740993.0", and would pull libm's
// rounding-mode calls into the shim's static front).
std::optional<std::int64_t> WholeNumber(std::string_view text) {
  // The usual spelling ("12", "-3") at from_chars' speed: a probe reads
  // thousands of these.
  std::int64_t plain = 0;
  if (const auto r = std::from_chars(text.data(), text.data() + text.size(), plain);
      r.ec == std::errc() && r.ptr == text.data() + text.size()) {
    return plain;
  }
  const bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  const std::size_t e = text.find_first_of("eE");
  std::string_view mantissa = text.substr(0, e);
  std::int64_t exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view exp_text = text.substr(e + 1);
    if (!exp_text.empty() && exp_text.front() == '+') exp_text.remove_prefix(1);
    const auto r = std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
    if (r.ec != std::errc() || r.ptr != exp_text.data() + exp_text.size()) return std::nullopt;
  }
  std::string digits;
  if (const std::size_t dot = mantissa.find('.'); dot != std::string_view::npos) {
    digits = std::string(mantissa.substr(0, dot)) + std::string(mantissa.substr(dot + 1));
    exponent -= static_cast<std::int64_t>(mantissa.size() - dot - 1);
  } else {
    digits = std::string(mantissa);
  }
  // A negative exponent drops trailing digits, which must be zeros.
  for (; exponent < 0; ++exponent) {
    if (digits.empty() || digits.back() != '0') {
      if (digits.find_first_not_of('0') == std::string::npos) return 0;  // 0.0e-5
      return std::nullopt;
    }
    digits.pop_back();
  }
  // The magnitude, negative all the way so that INT64_MIN fits.
  std::int64_t value = 0;
  for (const char c : digits) {
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_sub_overflow(value, c - '0', &value)) {
      return std::nullopt;
    }
  }
  for (; exponent > 0; --exponent) {
    if (value == 0) break;
    if (__builtin_mul_overflow(value, 10, &value)) return std::nullopt;
  }
  if (negative) return value;
  if (value == std::numeric_limits<std::int64_t>::min()) return std::nullopt;
  return -value;
}

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
  return InvalidArgumentError("not valid JSON at byte " + std::to_string(p_ - begin_) + ": " +
                              std::string(what));
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

bool JsonCursor::LiteralAt() {
  return Literal(*p_ == 't' ? "true" : *p_ == 'f' ? "false" : "null");
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
      ReadJsonString(std::string_view(p_, static_cast<std::size_t>(end_ - p_)), out, strict_);
  p_ += read.end;
  return read.error == nullptr || Fail(read.error);
}

// JSON's number, as RFC 8259 writes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool JsonCursor::CheckNumber() {
  auto digits = [&] {
    const char* start = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return p_ > start;
  };
  if (p_ < end_ && *p_ == '-') ++p_;
  if (p_ < end_ && *p_ == '0') {
    ++p_;
  } else if (!digits()) {
    return Fail("a bad number");
  }
  if (p_ < end_ && *p_ == '.') {
    ++p_;
    if (!digits()) return Fail("a bad number");
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (!digits()) return Fail("a bad number");
  }
  return true;
}

// One value checked as RFC 8259 writes it, whatever it holds.
bool JsonCursor::CheckValue(int depth) {
  if (depth > kMaxDepth) return Fail("nested too deeply");
  Space();
  if (p_ == end_) return Fail("a value was expected");
  switch (*p_) {
    case '"': {
      std::string ignored;
      return Decode(&ignored);
    }
    case 't':
    case 'f':
    case 'n':
      return LiteralAt();
    case '{':
    case '[':
      return CheckContainer(depth);
    default:
      return CheckNumber();
  }
}

bool JsonCursor::CheckContainer(int depth) {
  const char close = *p_ == '{' ? '}' : ']';
  ++p_;
  Space();
  if (p_ < end_ && *p_ == close) {
    ++p_;
    return true;
  }
  for (;;) {
    if (close == '}') {
      Space();
      std::string key;
      if (p_ == end_ || *p_ != '"') return Fail("a member name was expected");
      if (!Decode(&key)) return false;
      Space();
      if (p_ == end_ || *p_ != ':') return Fail("':' was expected");
      ++p_;
    }
    if (!CheckValue(depth + 1)) return false;
    Space();
    if (p_ < end_ && *p_ == ',') {
      ++p_;
      continue;
    }
    if (p_ < end_ && *p_ == close) {
      ++p_;
      return true;
    }
    return Fail(close == '}' ? "',' or '}' was expected" : "',' or ']' was expected");
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
  // Strict: a number or literal as RFC 8259 writes it; else as far as it goes.
  const bool read = !strict_     ? SkipValue()
                    : *p_ == 't' ? Literal("true")
                    : *p_ == 'f' ? Literal("false")
                                 : CheckNumber();
  if (!read) return Error(failure_);
  out->assign(start, p_);
  return OkStatus();
}

Status JsonCursor::Int(std::int64_t* out) {
  Space();
  if (Accept("null")) {
    *out = 0;
    return OkStatus();
  }
  const char* start = p_;
  if (p_ == end_ || !(*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) || !CheckNumber()) {
    return Error(failure_.empty() ? "a number was expected" : failure_);
  }
  const std::optional<std::int64_t> whole =
      WholeNumber(std::string_view(start, static_cast<std::size_t>(p_ - start)));
  if (!whole) return Error("an integer was expected");
  *out = *whole;
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

Status JsonCursor::Check() { return CheckValue(0) ? OkStatus() : Error(failure_); }

char JsonCursor::Peek() {
  Space();
  return p_ < end_ ? *p_ : '\0';
}

Status JsonCursor::End() {
  Space();
  return p_ == end_ ? OkStatus() : Error("text after the value");
}

std::optional<std::map<std::string, std::string>> ReadFlatJsonObject(std::string_view text) {
  JsonCursor c(text, JsonCursor::Mode::kStrict);
  if (c.Peek() != '{') return std::nullopt;
  std::map<std::string, std::string> members;
  Status read = c.Object([&](std::string_view key) -> Status {
    const char next = c.Peek();
    if (next == '{' || next == '[' || next == 'n') return c.Check();  // checked, left out
    std::string value;
    SKY_RETURN_IF_ERROR(c.String(&value));
    members[std::string(key)] = std::move(value);
    return OkStatus();
  });
  if (!read.ok() || !c.End().ok()) return std::nullopt;
  return members;
}

}  // namespace skyslurm
