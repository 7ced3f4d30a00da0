#include "broker/job/script.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace skyslurm::job {
namespace {

struct Word {
  std::string text;      // after removing quotes
  std::size_t offset;    // of its first character in the line
  std::size_t length;    // as written
  bool quoted = false;
  bool op = false;       // a control operator: ; && || | & ( ) { }
};

// Splits one line into shell words and control operators, well enough to
// find `module` commands: quotes group, a '#' at a word start begins a
// comment. No expansion is done.
std::vector<Word> ShellWords(std::string_view line) {
  std::vector<Word> words;
  std::size_t p = 0;
  while (p < line.size()) {
    const char c = line[p];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++p;
      continue;
    }
    if (c == '#') break;
    if (c == ';' || c == '|' || c == '&' || c == '(' || c == ')' || c == '{' || c == '}' ||
        c == '`') {
      std::size_t len = (p + 1 < line.size() && (line[p + 1] == c) && (c == '|' || c == '&'))
                            ? 2
                            : 1;
      words.push_back({std::string(line.substr(p, len)), p, len, false, true});
      p += len;
      continue;
    }
    Word w{"", p, 0, false, false};
    while (p < line.size()) {
      const char d = line[p];
      if (d == ' ' || d == '\t' || d == '\r' || d == ';' || d == '|' || d == '&' || d == ')' ||
          d == '`') {
        break;
      }
      if (d == '\'' || d == '"') {
        w.quoted = true;
        const auto close = line.find(d, p + 1);
        const std::size_t stop = close == std::string_view::npos ? line.size() : close;
        w.text += line.substr(p + 1, stop - p - 1);
        p = close == std::string_view::npos ? line.size() : close + 1;
        continue;
      }
      if (d == '\\' && p + 1 < line.size()) {
        w.text += line[p + 1];
        p += 2;
        continue;
      }
      w.text += d;
      ++p;
    }
    w.length = p - w.offset;
    words.push_back(std::move(w));
  }
  return words;
}

bool IsKeyword(std::string_view w) {
  return w == "then" || w == "do" || w == "else" || w == "elif" || w == "if" || w == "while" ||
         w == "until" || w == "!" || w == "time" || w == "command" || w == "builtin";
}

ModuleUse MakeUse(const Word& w, int line, std::size_t line_offset, std::string_view verb) {
  ModuleUse use;
  use.line = line;
  use.offset = line_offset + w.offset;
  use.length = w.length;
  use.word = w.text;
  use.verb = std::string(verb);
  const auto slash = w.text.find('/');
  use.name = w.text.substr(0, slash);
  if (slash != std::string::npos) use.version = w.text.substr(slash + 1);
  use.dynamic = w.text.find_first_of("$`*?[") != std::string::npos;
  return use;
}

}  // namespace

Status CheckScriptText(std::string_view text, std::string_view name) {
  if (text.empty()) return InvalidArgumentError(fmt::format("{}: the batch script is empty", name));
  if (text.find('\0') != std::string_view::npos) {
    return InvalidArgumentError(
        fmt::format("{}: this is not a text file (it contains NUL bytes)", name));
  }
  if (text.find("\r\n") != std::string_view::npos) {
    return InvalidArgumentError(fmt::format(
        "{}: the batch script contains DOS line breaks (\\r\\n); convert it with dos2unix",
        name));
  }
  if (!text.starts_with("#!")) {
    return InvalidArgumentError(fmt::format(
        "{}:1: this does not look like a batch script: the first line must start with #! "
        "followed by the path to an interpreter",
        name));
  }
  return OkStatus();
}

Result<std::string> ReadScriptFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return NotFoundError(fmt::format("{}: cannot open the batch script: {}", path,
                                     err != 0 ? std::strerror(err) : "not found"));
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  SKY_RETURN_IF_ERROR(CheckScriptText(text, path));
  return text;
}

std::vector<ModuleUse> FindModuleLoads(std::string_view script, int from_line) {
  std::vector<ModuleUse> uses;
  int line_no = 0;
  std::size_t start = 0;
  while (start < script.size()) {
    std::size_t end = script.find('\n', start);
    if (end == std::string_view::npos) end = script.size();
    const std::string_view line = script.substr(start, end - start);
    const std::size_t line_offset = start;
    start = end + 1;
    ++line_no;
    if (line_no < from_line) continue;
    if (line.find("module") == std::string_view::npos && line.find("ml") == std::string_view::npos) {
      continue;
    }
    const auto words = ShellWords(line);
    // Walk simple commands: a command starts after an operator or keyword.
    std::size_t i = 0;
    while (i < words.size()) {
      while (i < words.size() && (words[i].op || IsKeyword(words[i].text))) ++i;
      if (i >= words.size()) break;
      std::size_t cmd_end = i;
      while (cmd_end < words.size() && !words[cmd_end].op) ++cmd_end;
      const std::string& command = words[i].text;
      if (command == "module" || command == "ml") {
        std::size_t k = i + 1;
        while (k < cmd_end && words[k].text.starts_with("-") && command == "module") ++k;
        std::string verb = command == "ml" ? "ml" : (k < cmd_end ? words[k].text : "");
        if (command == "module") ++k;
        if (command == "ml" && k < cmd_end) {
          const std::string& sub = words[k].text;
          if (sub == "load" || sub == "add" || sub == "swap" || sub == "switch") {
            verb = sub;
            ++k;
          } else if (sub == "unload" || sub == "rm" || sub == "del" || sub == "purge" ||
                     sub == "list" || sub == "avail" || sub == "spider" || sub == "show" ||
                     sub == "save" || sub == "restore" || sub == "use" || sub == "unuse" ||
                     sub == "reset" || sub == "help" || sub == "whatis" || sub == "keyword") {
            verb.clear();  // not a load
          }
        }
        const bool loads = verb == "load" || verb == "add" || verb == "ml" || verb == "swap" ||
                           verb == "switch" || verb == "try-load" || verb == "try-add";
        if (loads) {
          std::vector<const Word*> args;
          for (; k < cmd_end; ++k) {
            // ml -name unloads; options (--force) are not modules.
            if (words[k].text.starts_with("-")) continue;
            args.push_back(&words[k]);
          }
          // swap/switch a b: the module loaded is b (a alone means "swap in a").
          if ((verb == "swap" || verb == "switch") && args.size() == 2) args.erase(args.begin());
          for (const Word* w : args) uses.push_back(MakeUse(*w, line_no, line_offset, verb));
        }
      }
      i = cmd_end;
    }
  }
  return uses;
}

}  // namespace skyslurm::job
