#include <gtest/gtest.h>

#include "hwprof/engine/graph.hpp"

namespace hwprof {
namespace {

const char* const kText =
    "{\n"
    "  \"name\": \"m\",\n"
    "  \"layers\": [\n"
    "    {\"name\": \"a\", \"op\": \"relu\"},\n"
    "    {\"name\": \"b\\\"q\", \"op\": \"conv2d\", \"kernel\": [3, 3]}\n"
    "  ]\n"
    "}\n";

TEST(SourceText, LocatesMembersAndElements) {
  const SourceText source("m.json", kText);
  EXPECT_EQ(source.locate(""), "m.json:1:1");
  EXPECT_EQ(source.locate("/name"), "m.json:2:11");
  EXPECT_EQ(source.locate("/layers"), "m.json:3:13");
  EXPECT_EQ(source.locate("/layers/0"), "m.json:4:5");
  EXPECT_EQ(source.locate("/layers/1/op"), "m.json:5:28");
  EXPECT_EQ(source.locate("/layers/1/kernel/1"), "m.json:5:52");
}

TEST(SourceText, FallsBackToTheNearestExistingAncestor) {
  const SourceText source("m.json", kText);
  EXPECT_EQ(source.locate("/layers/1/stride"), "m.json:5:5");
  EXPECT_EQ(source.locate("/layers/7/kernel"), "m.json:3:13");
  EXPECT_EQ(source.locate("/nothing/here"), "m.json:1:1");
}

TEST(SourceText, CountsCharactersNotBytes) {
  const SourceText source("u.json", "{\"é\": 1, \"x\": 2}");
  EXPECT_EQ(source.locate("/x"), "u.json:1:15");
}

TEST(SourceText, SurvivesTruncatedText) {
  const SourceText source("t.json", "{\"layers\": [{\"name\": \"a\"");
  EXPECT_EQ(source.locate("/layers/0/op"), "t.json:1:13");
  EXPECT_EQ(source.locate("/layers/3"), "t.json:1:12");
}

}  // namespace
}  // namespace hwprof
