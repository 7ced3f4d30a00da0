// The plugin's binary contract: it exports only what Slurm's loader looks up,
// and it does not bring its own copy of libslurm (nor any library of ours).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "broker/util/command.h"

namespace skyslurm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Tool(const std::vector<std::string>& argv) {
  auto r = LocalCommandRunner().Run({.argv = argv});
  EXPECT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r.ok() && r->success()) << (r.ok() ? r->err : "");
  return r.ok() ? r->out : "";
}

TEST(PluginSymbolsTest, ExportsOnlyTheSpankEntryPoints) {
  std::istringstream symbols(
      Tool({"nm", "-D", "--defined-only", "--format=just-symbols", SKYSLURM_PLUGIN_PATH}));
  std::string symbol;
  int entry_points = 0;
  while (std::getline(symbols, symbol)) {
    const bool allowed = symbol == "plugin_name" || symbol == "plugin_type" ||
                         symbol == "plugin_version" || symbol.starts_with("slurm_spank_");
    EXPECT_TRUE(allowed) << "unexpected exported symbol: " << symbol;
    if (symbol.starts_with("slurm_spank_")) ++entry_points;
  }
  EXPECT_GE(entry_points, 1);
}

TEST(PluginSymbolsTest, DoesNotLinkSlurmOrHeavyLibraries) {
  const std::string dynamic = Tool({"readelf", "-d", SKYSLURM_PLUGIN_PATH});
  for (const char* library :
       {"libslurm", "libspdlog", "libcurl", "libssh", "libyaml", "libsqlite", "libfmt"}) {
    EXPECT_THAT(dynamic, Not(HasSubstr(library)));
  }
}

// Inside slurmstepd, in every step of every job: no RPC to slurmctld, no
// name lookup, no thread (the libslurm calls and libc functions it would
// need are not even referenced).
TEST(PluginSymbolsTest, CallsNoControllerNoResolverAndStartsNoThread) {
  std::istringstream symbols(
      Tool({"nm", "-D", "--undefined-only", "--format=just-symbols", SKYSLURM_PLUGIN_PATH}));
  std::string symbol;
  while (std::getline(symbols, symbol)) {
    const std::string name = symbol.substr(0, symbol.find('@'));
    EXPECT_FALSE(name.starts_with("slurm_load_") || name.starts_with("slurm_get_") ||
                 name == "getaddrinfo" || name == "gethostbyname" ||
                 name.starts_with("pthread_create"))
        << "the plugin references " << symbol;
  }
}

}  // namespace
}  // namespace skyslurm
