#include "broker/util/json_cursor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace skyslurm {
namespace {

TEST(JsonCursorTest, ReadsScalarsAsTheCallerAsksAndSkipsTheRest) {
  const std::string text = R"({"s":"a\"b","n":-12,"q":2,"f":1.5,"t":true,"z":null,
                               "big":{"x":[1,{"y":"}]"}]},"esc\u0061ped":"k","arr":[1,2,3]})";
  JsonCursor c(text);
  std::string s, q, f, escaped, missing = "x";
  std::int64_t n = 0, count = 0;
  bool t = false;
  std::vector<std::string> keys;
  Status st = c.Object([&](std::string_view key) {
    keys.emplace_back(key);
    if (key == "s") return c.String(&s);
    if (key == "n") return c.Int(&n);
    if (key == "q") return c.String(&q);  // a number read as text
    if (key == "f") return c.String(&f);
    if (key == "t") return c.Bool(&t);
    if (key == "z") return c.String(&missing);  // null reads as ""
    if (key == "escaped") return c.String(&escaped);
    if (key == "arr") {
      return c.Array([&] {
        ++count;
        return c.Skip();
      });
    }
    return c.Skip();
  });
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(c.End().ok());
  EXPECT_EQ(s, "a\"b");
  EXPECT_EQ(n, -12);
  EXPECT_EQ(q, "2");
  EXPECT_EQ(f, "1.5");
  EXPECT_TRUE(t);
  EXPECT_EQ(missing, "");
  EXPECT_EQ(escaped, "k");  // an escaped key is decoded
  EXPECT_EQ(count, 3);
  EXPECT_EQ(keys.size(), 9u);
}

TEST(JsonCursorTest, KindMismatchesAreErrorsWithTheirOffset) {
  {
    JsonCursor c(R"({"a":{"b":1}})");
    std::string out;
    Status st = c.Object([&](std::string_view) { return c.String(&out); });
    EXPECT_NE(st.message().find("at byte 5: a scalar was expected"), std::string::npos)
        << st.message();
  }
  {
    JsonCursor c(R"([1.5])");
    std::int64_t v = 0;
    Status st = c.Array([&] { return c.Int(&v); });
    EXPECT_NE(st.message().find("an integer was expected"), std::string::npos) << st.message();
  }
  {
    JsonCursor c(R"("not an object")");
    Status st = c.Object([&](std::string_view) { return c.Skip(); });
    EXPECT_NE(st.message().find("an object was expected"), std::string::npos) << st.message();
  }
}

// Looking for a null that is not there records no failure: a later error
// names its own cause (a regression: "an unknown literal" was reported).
TEST(JsonCursorTest, ALaterErrorNamesItsOwnCauseAfterANullWasLookedFor) {
  JsonCursor c(R"({"a":nope,"b":{]})");
  std::string a;
  Status st = c.Object([&](std::string_view key) { return key == "a" ? c.String(&a) : c.Skip(); });
  EXPECT_EQ(a, "nope");
  EXPECT_NE(st.message().find("a bracket does not match"), std::string::npos) << st.message();
}

TEST(JsonCursorTest, StopLeavesTheRestUnscannedAndRawGivesAValuesText) {
  // Broken after the head: never reached once the head is read.
  JsonCursor c(R"({"metadata":{"continue":"tok"},"items":[{"a":1}, BROKEN)");
  std::string token;
  Status st = c.Object([&](std::string_view key) {
    if (key != "metadata") return c.Skip();
    Status got =
        c.Object([&](std::string_view k) { return k == "continue" ? c.String(&token) : c.Skip(); });
    c.Stop();
    return got;
  });
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(token, "tok");

  JsonCursor r(R"({"type":"ADDED","object":{"k":[1,"]"]}})");
  std::string_view raw;
  ASSERT_TRUE(r.Object([&](std::string_view key) {
                 return key == "object" ? r.Raw(&raw) : r.Skip();
               }).ok());
  EXPECT_EQ(raw, R"({"k":[1,"]"]})");
}

}  // namespace
}  // namespace skyslurm
