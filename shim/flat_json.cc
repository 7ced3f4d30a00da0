#include "shim/flat_json.h"

#include <cstdio>

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
  static void Utf8(unsigned cp, std::string* out) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  bool Hex4(unsigned* cp) {
    if (i_ + 4 > s_.size()) return false;
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<unsigned>(c - 'A' + 10);
      else
        return false;
    }
    *cp = v;
    return true;
  }
  bool String(std::string* out) {
    if (!Eat('"')) return false;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (i_ >= s_.size()) return false;
      const char e = s_[i_++];
      switch (e) {
        case '"':
          *out += '"';
          break;
        case '\\':
          *out += '\\';
          break;
        case '/':
          *out += '/';
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          unsigned cp = 0;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
            unsigned low = 0;
            if (!Word("\\u") || !Hex4(&low) || low < 0xDC00 || low >= 0xE000) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            return false;
          }
          Utf8(cp, out);
          break;
        }
        default:
          return false;
      }
    }
    return false;
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

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::optional<std::map<std::string, std::string>> ReadFlatJsonObject(std::string_view text) {
  return Reader(text).Object();
}

}  // namespace skyslurm::shim
