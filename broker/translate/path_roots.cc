#include "broker/translate/path_roots.h"

#include <fmt/format.h>

#include <optional>

namespace skyslurm::translate {
namespace {

std::string Expand(std::string_view pattern, const std::string& user) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'u') {
      out += user;
      ++i;
    } else if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += '%';
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

std::string DropTrailingSlashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

// What follows `root` in `path` ("" for the root itself, "/rest" below it),
// or nothing when `path` is not under it (at a component boundary).
std::optional<std::string_view> Under(std::string_view path, std::string_view root) {
  if (root.empty()) return std::nullopt;
  if (root == "/") return path;
  if (!path.starts_with(root)) return std::nullopt;
  std::string_view rest = path.substr(root.size());
  if (!rest.empty() && rest.front() != '/') return std::nullopt;
  return rest;
}

// Paths that are the same on every Linux machine, never a user's files.
bool IsSystemPath(std::string_view path) {
  for (std::string_view p : {"/dev", "/proc", "/sys"}) {
    if (Under(path, p)) return true;
  }
  return false;
}

// The word-ending characters of a path in a shell script.
bool EndsPath(char c) {
  switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case '\r':
    case '"':
    case '\'':
    case ':':
    case ';':
    case '&':
    case '|':
    case '(':
    case ')':
    case '`':
    case '<':
    case '>':
    case ',':
      return true;
    default:
      return false;
  }
}

bool StartsPath(char before) { return EndsPath(before) || before == '='; }

// Directive and comment lines are not the script's commands (directives are
// options, mapped as such).
bool IsCommentLine(std::string_view line) {
  const std::size_t first = line.find_first_not_of(" \t");
  return first != std::string_view::npos && line[first] == '#';
}

}  // namespace

std::string ExpandFolder(std::string_view pattern, const std::string& user,
                         const std::string& home) {
  std::string path = Expand(pattern, user);
  if (path == "~") return home;
  if (path.starts_with("~/")) {
    const std::string rest = path.substr(2);
    return home.empty() ? rest : DropTrailingSlashes(home) + "/" + rest;
  }
  return path;
}

const PathRoot* PathRoots::Find(std::string_view name) const {
  for (const PathRoot& r : roots) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

PathRoots ExpandRoots(const std::map<std::string, std::string>& patterns, const std::string& user) {
  PathRoots out;
  for (const auto& [name, pattern] : patterns) {
    if (pattern.empty() || (user.empty() && pattern.find("%u") != std::string::npos)) continue;
    const std::string kept = DropTrailingSlashes(pattern);
    const std::string path = DropTrailingSlashes(Expand(kept, user));
    // "/" would hold every path of the machine: no root.
    if (path == "/" || path.empty()) continue;
    out.roots.push_back({name, path, kept});
  }
  return out;
}

std::string DescribeRoots(const PathRoots& roots) {
  std::string out;
  for (const PathRoot& r : roots.roots) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", r.name, r.path);
  }
  return out;
}

PathMapping MapPath(std::string_view path, const PathRoots& from, const PathRoots& to) {
  PathMapping m;
  m.path = std::string(path);
  if (path.empty() || path.front() != '/' || from.empty() || IsSystemPath(path)) return m;
  // The longest root of the home it lies under, as expanded or as spelled.
  const PathRoot* best = nullptr;
  std::string_view rest;
  bool spelled = false;
  for (const PathRoot& r : from.roots) {
    for (bool as_pattern : {false, true}) {
      const std::string& root = as_pattern ? r.pattern : r.path;
      auto under = Under(path, root);
      if (!under) continue;
      if (best == nullptr || root.size() > (spelled ? best->pattern : best->path).size()) {
        best = &r;
        rest = *under;
        spelled = as_pattern;
      }
    }
  }
  if (best == nullptr) {
    m.fate = PathMapping::Fate::kOutside;
    // Under a root of the target as it is: it is there (a shared path).
    for (const PathRoot& r : to.roots) {
      if (Under(path, r.path)) {
        m.fate = PathMapping::Fate::kSame;
        m.root = r.name;
      }
    }
    return m;
  }
  m.root = best->name;
  const PathRoot* there = to.Find(best->name);
  if (there == nullptr) {
    m.fate = PathMapping::Fate::kNoCounterpart;
    return m;
  }
  m.path = (spelled ? there->pattern : there->path) + std::string(rest);
  if (m.path.size() > 1 && m.path.back() == '/' && path.back() != '/') m.path.pop_back();
  m.fate = m.path == path ? PathMapping::Fate::kSame : PathMapping::Fate::kMapped;
  return m;
}

ListMapping MapPathList(std::string_view value, const PathRoots& from, const PathRoots& to) {
  ListMapping out;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = value.find(':', start);
    const std::string_view element = value.substr(
        start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
    if (!element.empty() && element.front() == '/') {
      PathMapping m = MapPath(element, from, to);
      out.changed = out.changed || m.fate == PathMapping::Fate::kMapped;
      out.value += m.path;
      out.mappings.push_back(std::move(m));
    } else {
      out.value += element;
    }
    if (colon == std::string_view::npos) break;
    out.value += ':';
    start = colon + 1;
  }
  return out;
}

std::vector<ScriptPath> FindScriptPaths(std::string_view script, const PathRoots& from,
                                        const PathRoots& to) {
  std::vector<ScriptPath> out;
  if (from.empty()) return out;
  int line = 1;
  std::size_t line_start = 0;
  bool comment = IsCommentLine(script.substr(0, script.find('\n')));
  for (std::size_t i = 0; i < script.size(); ++i) {
    const char c = script[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      comment =
          IsCommentLine(script.substr(line_start, script.find('\n', line_start) - line_start));
      continue;
    }
    if (comment || c != '/' || (i > line_start && !StartsPath(script[i - 1]))) continue;
    std::size_t end = i;
    while (end < script.size() && !EndsPath(script[end])) ++end;
    const std::string_view path = script.substr(i, end - i);
    PathMapping m = MapPath(path, from, to);
    if (m.fate == PathMapping::Fate::kMapped || m.fate == PathMapping::Fate::kNoCounterpart) {
      out.push_back({line, i, std::string(path), std::move(m)});
    }
    i = end - 1;
  }
  return out;
}

}  // namespace skyslurm::translate
