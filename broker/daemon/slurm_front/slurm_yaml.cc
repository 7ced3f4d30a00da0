#include "broker/daemon/slurm_front/slurm_yaml.h"

#include <fmt/format.h>
#include <json/json.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string_view>

#include "broker/util/json_read.h"
#include "broker/util/json_string.h"

namespace skyslurm::daemon {
namespace {

// A string libyaml would write plain in block context: nothing that YAML
// would read as an indicator, a comment, a key or another document. The
// tag already says it is a string, so "true" or "12" stay plain.
bool Plain(std::string_view s) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ' || s.back() == ':') return false;
  if (s.starts_with("---") || s.starts_with("...")) return false;
  static constexpr std::string_view kIndicators = "-?:,[]{}#&*!|>'\"%@`";
  if (kIndicators.find(s.front()) != std::string_view::npos) {
    // "-x", "?x", ":x" are plain when what follows is not a space.
    const bool dash_like = s.front() == '-' || s.front() == '?' || s.front() == ':';
    if (!dash_like || s.size() < 2 || s[1] == ' ') return false;
  }
  if (s.find(": ") != std::string_view::npos || s.find(" #") != std::string_view::npos) {
    return false;
  }
  return std::ranges::none_of(s, [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

bool Printable(std::string_view s) {
  return std::ranges::none_of(s, [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

std::string Quoted(std::string_view s) {
  if (Plain(s)) return std::string(s);
  std::string out;
  if (Printable(s)) {  // single-quoted: only ' is doubled
    out = "'";
    for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
  }
  return JsonQuote(s);  // JSON's escapes are YAML's double-quoted ones
}

// A scalar with its tag ("!!int 12"); "" for a map or a sequence.
std::string Scalar(const Json::Value& v, EmptyString empty) {
  switch (v.type()) {
    case Json::nullValue:
      return "!!null null";
    case Json::intValue:
      return fmt::format("!!int {}", v.asInt64());
    case Json::uintValue:
      return fmt::format("!!int {}", v.asUInt64());
    case Json::realValue:
      return fmt::format("!!float {:f}", v.asDouble());
    case Json::booleanValue:
      return v.asBool() ? "!!bool true" : "!!bool false";
    case Json::stringValue:
      // An empty string: squeue's JSON writes a string it does not have as
      // "", its YAML as null ("comment": "" is "!!str comment: !!null
      // null"); sacct's data has empty strings, written as a bare tag.
      if (v.asString().empty()) return empty == EmptyString::kNull ? "!!null null" : "!!str";
      return "!!str " + Quoted(v.asString());
    default:
      return "";
  }
}

void Write(const Json::Value& v, int indent, EmptyString empty, std::string& out);

// What follows a key (or a sequence's "- "): the scalar on the same line,
// or the collection's tag and then its nodes on the next lines. A
// sequence in a map is written at the map's indentation, as libyaml does.
void WriteValue(const Json::Value& v, int indent, bool in_sequence, EmptyString empty,
                std::string& out) {
  if (v.isObject()) {
    if (v.empty()) {
      out += "!!map {}\n";
      return;
    }
    out += "!!map\n";
    Write(v, indent + 2, empty, out);
  } else if (v.isArray()) {
    if (v.empty()) {
      out += "!!seq []\n";
      return;
    }
    out += "!!seq\n";
    Write(v, in_sequence ? indent + 2 : indent, empty, out);
  } else {
    out += Scalar(v, empty) + "\n";
  }
}

void WriteKeyed(const std::string& name, const Json::Value& v, int indent, EmptyString empty,
                std::string& out) {
  out += std::string(static_cast<std::size_t>(indent), ' ') + "!!str " + Quoted(name) + ": ";
  WriteValue(v, indent, false, empty, out);
}

void Write(const Json::Value& v, int indent, EmptyString empty, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  if (v.isArray()) {
    for (const auto& e : v) {
      out += pad + "- ";
      if (e.isObject() && !e.empty()) {
        // The map's first key on the dash's line is what libyaml avoids:
        // the tag there, the keys below, two further in.
        out += "!!map\n";
        Write(e, indent + 2, empty, out);
      } else {
        WriteValue(e, indent, true, empty, out);
      }
    }
    return;
  }
  for (const std::string& name : v.getMemberNames()) WriteKeyed(name, v[name], indent, empty, out);
}

}  // namespace

Result<std::string> SlurmYamlFromJson(const std::string& json, EmptyString empty) {
  Json::Value doc;
  std::string why;
  if (!ReadJson(json, &doc, &why) || !doc.isObject()) {
    return InvalidArgumentError(
        fmt::format("not a JSON object: {}", why.empty() ? "another kind of value" : why));
  }
  std::string out = "%YAML 1.1\n";
  if (doc.empty()) return out + "--- !!map {}\n...\n";
  out += "--- !!map\n";
  // Slurm's order at the top, whatever else after.
  static constexpr std::array<std::string_view, 4> kFirst = {"meta", "errors", "warnings", "jobs"};
  for (const std::string_view name : kFirst) {
    if (doc.isMember(std::string(name)))
      WriteKeyed(std::string(name), doc[std::string(name)], 0, empty, out);
  }
  for (const std::string& name : doc.getMemberNames()) {
    if (std::ranges::find(kFirst, name) == kFirst.end()) WriteKeyed(name, doc[name], 0, empty, out);
  }
  return out + "...\n";
}

}  // namespace skyslurm::daemon
