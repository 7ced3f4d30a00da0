#include "broker/util/json_string.h"

#include <cstdint>
#include <cstdio>

namespace skyslurm {
namespace {

void PutUtf8(std::uint32_t cp, std::string* out) {
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

// Four hex digits at text[i]; false when they are not.
bool Hex4(std::string_view text, std::size_t i, std::uint32_t* out) {
  if (i + 4 > text.size()) return false;
  std::uint32_t v = 0;
  for (std::size_t k = i; k < i + 4; ++k) {
    const char c = text[k];
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= static_cast<std::uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v |= static_cast<std::uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      v |= static_cast<std::uint32_t>(c - 'A' + 10);
    } else {
      return false;
    }
  }
  *out = v;
  return true;
}

}  // namespace

JsonStringRead ReadJsonString(std::string_view text, std::string* out, bool strict) {
  out->clear();
  std::size_t i = 1;  // past the opening quote
  for (;;) {
    // A run without escapes is copied at once.
    std::size_t j = i;
    while (j < text.size() && text[j] != '"' && text[j] != '\\' &&
           !(strict && static_cast<unsigned char>(text[j]) < 0x20)) {
      ++j;
    }
    out->append(text.data() + i, j - i);
    i = j;
    if (i == text.size()) return {i, "unterminated string"};
    if (text[i] == '"') return {i + 1, nullptr};
    if (text[i] != '\\') return {i, "a control character in a string"};
    if (++i == text.size()) return {i, "unterminated string"};
    switch (text[i++]) {
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
        std::uint32_t cp = 0;
        if (!Hex4(text, i, &cp)) return {i, "a bad \\u escape"};
        i += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return {i, "a lone surrogate"};
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          std::uint32_t low = 0;
          if (text.substr(i, 2) != "\\u") return {i, "a lone surrogate"};
          if (!Hex4(text, i + 2, &low) || low < 0xDC00 || low > 0xDFFF) {
            return {i, "a bad surrogate pair"};
          }
          i += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        PutUtf8(cp, out);
        break;
      }
      default:
        return {i - 1, "a bad escape"};
    }
  }
}

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
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
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

}  // namespace skyslurm
