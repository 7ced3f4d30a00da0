// docs/configuration.md's key tables name exactly the keys the parser takes
// (SettingKeys(), ClusterSettingKeys()), and docs/site.md's those of
// site.yaml (SiteSettingKeys()): a key added to one and not the other
// fails here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "broker/config/settings.h"
#include "broker/config/site_settings.h"

namespace skyslurm::config {
namespace {

// The first column's `key` of every table row between `from` and `to`.
std::set<std::string> DocumentedKeys(const std::string& text, const std::string& from,
                                     const std::string& to) {
  const auto begin = text.find(from);
  const auto end = to.empty() ? std::string::npos : text.find(to, begin);
  EXPECT_NE(begin, std::string::npos) << from;
  std::set<std::string> keys;
  std::istringstream lines(text.substr(begin, end == std::string::npos ? end : end - begin));
  const std::regex row("^\\| `([a-z_]+)` \\|.*");
  std::smatch m;
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_match(line, m, row)) keys.insert(m[1]);
  }
  return keys;
}

std::set<std::string> Names(const std::vector<SettingKey>& table) {
  std::set<std::string> names;
  for (const auto& k : table) names.insert(std::string(k.key));
  return names;
}

TEST(SettingsDocTest, TheConfigurationTablesNameEveryKeyTheParserTakes) {
  std::ifstream in(SKYSLURM_SOURCE_DIR "/docs/configuration.md");
  ASSERT_TRUE(in) << "no docs/configuration.md";
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(DocumentedKeys(text.str(), "\n| key | environment", "## Per-cluster keys"),
            Names(SettingKeys()));
  EXPECT_EQ(DocumentedKeys(text.str(), "## Per-cluster keys", "## Example"),
            Names(ClusterSettingKeys()));
}

TEST(SettingsDocTest, TheSiteTableNamesEveryKeyOfSiteYaml) {
  std::ifstream in(SKYSLURM_SOURCE_DIR "/docs/site.md");
  ASSERT_TRUE(in) << "no docs/site.md";
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(DocumentedKeys(text.str(), "### site.yaml", "## Backup"), Names(SiteSettingKeys()));
}

}  // namespace
}  // namespace skyslurm::config
