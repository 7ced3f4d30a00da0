#include "broker/ssh/command_batch.h"

#include <fmt/format.h>

#include <charconv>

namespace skyslurm::ssh {
namespace {

constexpr std::string_view kFrame = "skyslurm-batch ";

// A prefix of the text, for error messages.
std::string Quote(std::string_view text) {
  return std::string(text.substr(0, 200)) + (text.size() > 200 ? "..." : "");
}

bool ReadNumber(std::string_view& rest, long long* out) {
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), *out);
  if (ec != std::errc() || end == rest.data()) return false;
  rest.remove_prefix(static_cast<std::size_t>(end - rest.data()));
  return true;
}

}  // namespace

std::string BatchScript(const std::vector<std::string>& command_lines) {
  // Each command in a subshell of its own: a command line may `exec`, and the
  // status must still be written after it ends. `wc -c` pads with spaces on
  // some systems; the parser allows that.
  std::string s =
      "d=$(mktemp -d \"${TMPDIR:-/tmp}/skyslurm-batch.XXXXXX\") || exit 125\n"
      "trap 'rm -rf \"$d\"' EXIT\n";
  for (std::size_t i = 0; i < command_lines.size(); ++i) {
    s += fmt::format(
        "{{ ( {} ) >\"$d/{}.out\" 2>\"$d/{}.err\" </dev/null; echo $? >\"$d/{}.rc\"; }} &\n",
        command_lines[i], i, i, i);
  }
  s += "wait\n";
  s += fmt::format(
      "i=0\n"
      "while [ $i -lt {} ]; do\n"
      "  printf '{}%s %s %s %s\\n' $i \"$(cat \"$d/$i.rc\")\" \"$(wc -c <\"$d/$i.out\")\" "
      "\"$(wc -c <\"$d/$i.err\")\"\n"
      "  cat \"$d/$i.out\" \"$d/$i.err\"\n"
      "  i=$((i+1))\n"
      "done\n",
      command_lines.size(), kFrame);
  return s;
}

Result<std::vector<CommandOutput>> ParseBatchOutput(std::string_view printed, std::size_t count,
                                                    const std::vector<std::size_t>& max_output) {
  std::vector<CommandOutput> outputs;
  std::string_view rest = printed;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t eol = rest.find('\n');
    std::string_view header = rest.substr(0, eol);
    if (eol == std::string_view::npos || !header.starts_with(kFrame)) {
      return InternalError(fmt::format("expected the output of command {} of {}, got '{}'", i + 1,
                                       count, Quote(rest)));
    }
    header.remove_prefix(kFrame.size());
    long long index = 0, status = 0, out_len = 0, err_len = 0;
    if (!ReadNumber(header, &index) || !ReadNumber(header, &status) || !ReadNumber(header, &out_len) ||
        !ReadNumber(header, &err_len) || !header.empty() || index != static_cast<long long>(i) ||
        out_len < 0 || err_len < 0) {
      return InternalError(fmt::format("malformed frame header '{}'", Quote(rest.substr(0, eol))));
    }
    rest.remove_prefix(eol + 1);
    const auto lengths = static_cast<std::size_t>(out_len) + static_cast<std::size_t>(err_len);
    if (rest.size() < lengths) {
      return InternalError(fmt::format("command {} of {}: output cut short ({} of {} bytes)", i + 1,
                                       count, rest.size(), lengths));
    }
    CommandOutput out;
    // The shell's $? holds 128+N for a command killed by signal N.
    if (status > 128 && status < 128 + 65) {
      out.term_signal = static_cast<int>(status - 128);
    } else {
      out.exit_code = static_cast<int>(status);
    }
    const std::size_t limit = i < max_output.size() ? max_output[i] : std::string::npos;
    auto take = [&](std::size_t n, std::string* sink) {
      sink->assign(rest.substr(0, std::min(n, limit)));
      if (n > limit) out.truncated = true;
      rest.remove_prefix(n);
    };
    take(static_cast<std::size_t>(out_len), &out.out);
    take(static_cast<std::size_t>(err_len), &out.err);
    outputs.push_back(std::move(out));
  }
  if (!rest.empty()) {
    return InternalError(fmt::format("unexpected output after the last command: '{}'", Quote(rest)));
  }
  return outputs;
}

}  // namespace skyslurm::ssh
