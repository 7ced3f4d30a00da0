#include "broker/util/json_string.h"

#include <gtest/gtest.h>

#include <string>

namespace skyslurm {
namespace {

std::string Read(std::string_view text, bool strict = false) {
  std::string out;
  const JsonStringRead r = ReadJsonString(text, &out, strict);
  return r.error != nullptr ? std::string("error: ") + r.error : out;
}

TEST(JsonStringTest, EscapesAndUnicodeDecode) {
  EXPECT_EQ(Read(R"("plain" tail)"), "plain");
  EXPECT_EQ(Read(R"("q\"b\\s\/b\bf\fn\nr\rt\t")"), "q\"b\\s/b\bf\fn\nr\rt\t");
  EXPECT_EQ(Read(R"("\u00e9\u4e2d\uE000\uFFFF")"), "\xC3\xA9\xE4\xB8\xAD\xEE\x80\x80\xEF\xBF\xBF");
  EXPECT_EQ(Read(R"("\ud83d\ude00")"), "\xF0\x9F\x98\x80");  // a surrogate pair, joined
  std::string out;
  const JsonStringRead r = ReadJsonString(R"("ab"cd)", &out, true);
  EXPECT_EQ(r.end, 4u);  // past the closing quote
  EXPECT_EQ(r.error, nullptr);
}

TEST(JsonStringTest, BrokenLiteralsAreErrorsThatSayWhereAndWhy) {
  EXPECT_EQ(Read(R"("open)"), "error: unterminated string");
  EXPECT_EQ(Read(R"("bad \x")"), "error: a bad escape");
  EXPECT_EQ(Read(R"("\u12G4")"), "error: a bad \\u escape");
  EXPECT_EQ(Read(R"("\ud83d")"), "error: a lone surrogate");
  EXPECT_EQ(Read(R"("\ude00")"), "error: a lone surrogate");
  EXPECT_EQ(Read(R"("\ud83d\u0041")"), "error: a bad surrogate pair");
  std::string out;
  const JsonStringRead r = ReadJsonString("\"tab\there\"", &out, /*strict=*/true);
  EXPECT_STREQ(r.error, "a control character in a string");
  EXPECT_EQ(r.end, 4u);  // at the tab
  EXPECT_EQ(Read("\"tab\there\"", /*strict=*/false), "tab\there");
}

}  // namespace
}  // namespace skyslurm
