// The option table against the real Slurm 22.05 commands of the testbed:
// every option their --help and --usage list is in the table (or, where the
// text lists one the command then refuses, the command really refuses it),
// and every option in the table is one the real command accepts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "broker/job/option_table.h"
#include "tests/support/testbed.h"

namespace skyslurm::job {
void PrintTo(Tool tool, std::ostream* os) { *os << ToolName(tool); }
}  // namespace skyslurm::job

namespace skyslurm::testing {
namespace {

using job::Arg;
using job::Opt;
using job::OptionTable;
using job::Tool;

class RealOptionsTest : public WithTestbed<::testing::TestWithParam<Tool>> {
 protected:
  CommandOutput Real(std::vector<std::string> args) {
    args.insert(args.begin(), std::string(job::ToolName(GetParam())));
    return RunOn(tb_, "alpha", args, std::chrono::seconds(20));
  }

  static bool Refused(const CommandOutput& out) {
    return out.err.find("unrecognized option") != std::string::npos ||
           out.err.find("invalid option") != std::string::npos;
  }

  // The text of --help without the plugins' section (SPANK options come
  // from the plugin stack, not from the table).
  std::string HelpWithoutPlugins() {
    std::string help = Real({"--help"}).out;
    const auto start = help.find("Options provided by plugins:");
    if (start != std::string::npos) {
      auto end = help.find("\n\n", help.find("\n\n", start) + 2);
      // The section ends at the next heading: a line that does not start
      // with a blank, after a blank line.
      std::regex heading("\n\n[A-Za-z]");
      std::smatch m;
      std::string rest = help.substr(start + 30);
      if (std::regex_search(rest, m, heading)) {
        end = start + 30 + static_cast<std::size_t>(m.position(0));
      }
      help.erase(start, end - start);
    }
    return help;
  }
};

TEST_P(RealOptionsTest, EveryListedOptionIsInTheTable) {
  const OptionTable table(GetParam());
  const std::string text = HelpWithoutPlugins() + "\n" + Real({"--usage"}).out;
  ASSERT_GT(text.size(), 1000u);
  std::set<std::string> longs, shorts;
  const std::regex long_re("(?:^|[\\s\\[,|])--([a-zA-Z][a-zA-Z0-9_-]*)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), long_re);
       it != std::sregex_iterator(); ++it) {
    longs.insert((*it)[1]);
  }
  const std::regex short_re("(?:^|[\\s\\[])-([a-zA-Z])(?=[\\s,\\]=]|$)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), short_re);
       it != std::sregex_iterator(); ++it) {
    shorts.insert((*it)[1]);
  }
  EXPECT_GT(longs.size(), 60u);
  for (const std::string& name : longs) {
    if (table.Find(name) != nullptr) continue;
    // Listed but not ours: then the real command must refuse it.
    EXPECT_TRUE(Refused(Real({"--" + name + "=1", "--usage"})))
        << "--" << name << " is listed by " << job::ToolName(GetParam())
        << " and accepted, but missing from the option table";
  }
  for (const std::string& c : shorts) {
    if (table.FindShort(c[0]) != nullptr) continue;
    // sbatch --usage and salloc --usage list "[-r n]", which both refuse.
    EXPECT_TRUE(Refused(Real({"-" + c, "1", "--usage"})))
        << "-" << c << " is listed and accepted, but missing from the option table";
  }
}

TEST_P(RealOptionsTest, EveryOptionInTheTableIsAcceptedByTheRealCommand) {
  const OptionTable table(GetParam());
  int checked = 0;
  for (const job::OptionSpec* spec : table.options()) {
    if (spec->id >= Opt::kSkyAnyCluster) continue;  // plugin options: see spank tests
    std::string word = "--" + std::string(spec->name);
    if (spec->arg == Arg::kRequired) word += "=1";
    // --usage after it: the command stops there, having accepted (or
    // rejected the value of) the option before; nothing is submitted.
    CommandOutput out = Real({word, "--usage"});
    EXPECT_FALSE(Refused(out)) << word << ": " << out.err;
    if (spec->short_name != 0) {
      std::string short_word = std::string("-") + spec->short_name;
      if (spec->arg == Arg::kRequired) short_word += "1";
      CommandOutput short_out = Real({short_word, "--usage"});
      EXPECT_FALSE(Refused(short_out)) << short_word << ": " << short_out.err;
    }
    ++checked;
  }
  EXPECT_GT(checked, 80);
}

TEST_P(RealOptionsTest, UnknownOptionsAreRefusedByTheRealCommandToo) {
  // The probe itself can fail: a name that is not an option is refused.
  EXPECT_TRUE(Refused(Real({"--skyslurm-no-such-option", "--usage"})));
}

INSTANTIATE_TEST_SUITE_P(Commands, RealOptionsTest,
                         ::testing::Values(Tool::kSbatch, Tool::kSalloc, Tool::kSrun),
                         [](const auto& p) { return std::string(job::ToolName(p.param)); });

}  // namespace
}  // namespace skyslurm::testing
