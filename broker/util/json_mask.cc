#include "broker/util/json_mask.h"

#include <charconv>
#include <limits>

#include "broker/util/json_cursor.h"

namespace skyslurm {

JsonMask JsonMask::All() {
  JsonMask m;
  m.all_ = true;
  return m;
}

JsonMask JsonMask::Of(std::initializer_list<std::string_view> paths) {
  JsonMask m;
  for (std::string_view p : paths) m.Add(p);
  return m;
}

JsonMask& JsonMask::Add(std::string_view path) {
  if (all_) return *this;
  const std::size_t dot = path.find('.');
  const std::string_view head = path.substr(0, dot);
  JsonMask* child = nullptr;
  for (auto& [key, mask] : children_) {
    if (key == head) child = &mask;
  }
  if (child == nullptr) child = &children_.emplace_back(std::string(head), JsonMask()).second;
  if (dot == std::string_view::npos) {
    *child = All();
  } else {
    child->Add(path.substr(dot + 1));
  }
  return *this;
}

JsonMask& JsonMask::With(std::string_view key, JsonMask child) {
  for (auto& [k, mask] : children_) {
    if (k == key) {
      mask = std::move(child);
      return *this;
    }
  }
  children_.emplace_back(std::string(key), std::move(child));
  return *this;
}

const JsonMask* JsonMask::Child(std::string_view key) const {
  if (all_) return this;
  for (const auto& [k, mask] : children_) {
    if (k == key) return &mask;
  }
  return nullptr;
}

Result<Json::Value> ParseMasked(std::string_view text, const JsonMask& mask) {
  JsonCursor cursor(text);
  SKY_ASSIGN_OR_RETURN(Json::Value value, cursor.Value(mask));
  SKY_RETURN_IF_ERROR(cursor.End());
  return value;
}

Json::Value Masked(const Json::Value& value, const JsonMask& mask) {
  if (mask.keeps_all()) return value;
  if (value.isArray()) {
    Json::Value out(Json::arrayValue);
    for (const auto& element : value) out.append(Masked(element, mask));
    return out;
  }
  if (!value.isObject()) return value;
  Json::Value out(Json::objectValue);
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string key = it.name();
    if (const JsonMask* child = mask.Child(key)) out[key] = Masked(*it, *child);
  }
  return out;
}

// The cursor's tree building (json_cursor.h): what needs jsoncpp.

namespace {
constexpr int kMaxDepth = 256;
}  // namespace

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
    case 'f':
    case 'n': {
      const char first = *p_;
      if (!LiteralAt()) return false;
      *out = first == 'n' ? Json::Value() : Json::Value(first == 't');
      return true;
    }
    default:
      return Number(out);
  }
}

Result<Json::Value> JsonCursor::Value(const JsonMask& mask) {
  Json::Value out;
  if (!Build(mask, 0, &out)) return Error(failure_);
  return out;
}

}  // namespace skyslurm
