#include "objstore/s3/json_object.h"

#include <gtest/gtest.h>

namespace kvfs::s3 {
namespace {

TEST(JsonObjectTest, ReadsTopLevelStringsAndIntegers) {
  auto j = JsonObject::Parse(
      R"({"Version": 1, "AccessKeyId": "AKID", "Nested": {"a": "b"}, "Flag": true})");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->Integer("Version"), 1);
  EXPECT_EQ(j->String("AccessKeyId"), "AKID");
  EXPECT_TRUE(j->Has("Nested"));
  EXPECT_EQ(j->String("Nested"), "");  // not a string
  EXPECT_EQ(j->Integer("AccessKeyId"), std::nullopt);
  EXPECT_EQ(j->String("a"), "");  // only the top level
  EXPECT_FALSE(j->Has("Missing"));
  EXPECT_EQ(j->String("Missing"), "");
}

TEST(JsonObjectTest, RefusesWhatIsNotAnObject) {
  EXPECT_FALSE(JsonObject::Parse(""));
  EXPECT_FALSE(JsonObject::Parse("{\"a\": "));
  EXPECT_FALSE(JsonObject::Parse("[1, 2]"));
  EXPECT_FALSE(JsonObject::Parse("\"text\""));
  EXPECT_TRUE(JsonObject::Parse("{}"));
}

}  // namespace
}  // namespace kvfs::s3
