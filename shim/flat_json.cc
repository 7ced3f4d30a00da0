#include "shim/flat_json.h"

#include <cstdio>

#include "broker/util/json_string.h"

namespace skyslurm::shim {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  std::optional<std::map<std::string, std::string>> Object() {
    std::map<std::string, std::string> members;
    Space();
    if (!Eat('{')) return std::nullopt;
    Space();
    if (Eat('}')) return End(members);
    while (true) {
      Space();
      std::string key;
      if (!String(&key)) return std::nullopt;
      Space();
      if (!Eat(':')) return std::nullopt;
      Space();
      std::string value;
      bool kept = false;
      if (!Value(&value, &kept, 0)) return std::nullopt;
      if (kept) members[key] = std::move(value);
      Space();
      if (Eat(',')) continue;
      if (Eat('}')) return End(members);
      return std::nullopt;
    }
  }

 private:
  std::optional<std::map<std::string, std::string>> End(std::map<std::string, std::string>& m) {
    Space();
    if (i_ != s_.size()) return std::nullopt;
    return std::move(m);
  }
  void Space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }
  bool Eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool Word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  bool String(std::string* out) {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    const JsonStringRead read = ReadJsonString(s_.substr(i_), out, /*strict=*/true);
    if (read.error != nullptr) return false;
    i_ += read.end;
    return true;
  }
  bool Number(std::string* out) {
    const std::size_t start = i_;
    Eat('-');
    const std::size_t digits = i_;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
    if (i_ == digits) return false;
    if (Eat('.')) {
      const std::size_t frac = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      if (i_ == frac) return false;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (!Eat('+')) Eat('-');
      const std::size_t exp = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      if (i_ == exp) return false;
    }
    *out = std::string(s_.substr(start, i_ - start));
    return true;
  }
  // A value; `kept` says whether it is a scalar kept in `out`.
  bool Value(std::string* out, bool* kept, int depth) {
    if (depth > 64 || i_ >= s_.size()) return false;
    *kept = true;
    switch (s_[i_]) {
      case '"':
        return String(out);
      case 't':
        *out = "true";
        return Word("true");
      case 'f':
        *out = "false";
        return Word("false");
      case 'n':
        *kept = false;
        return Word("null");
      case '{':
      case '[': {
        *kept = false;
        const char close = s_[i_] == '{' ? '}' : ']';
        const bool object = close == '}';
        ++i_;
        Space();
        if (Eat(close)) return true;
        while (true) {
          Space();
          std::string ignored;
          bool k = false;
          if (object) {
            if (!String(&ignored)) return false;
            Space();
            if (!Eat(':')) return false;
            Space();
          }
          if (!Value(&ignored, &k, depth + 1)) return false;
          Space();
          if (Eat(',')) continue;
          return Eat(close);
        }
      }
      default:
        return Number(out);
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace

std::optional<std::map<std::string, std::string>> ReadFlatJsonObject(std::string_view text) {
  return Reader(text).Object();
}

}  // namespace skyslurm::shim
