// UserXattrs: setxattr's rules, the bound, and the metadata encoding both ways.
#include "base/user_xattrs.h"

#include <gtest/gtest.h>

namespace kvfs {
namespace {

using Mode = UserXattrs::SetMode;

TEST(UserXattrsTest, OnlyUserNamesOutsideKvfsOwn) {
  EXPECT_TRUE(UserXattrs::Accepts("user.vllm.kv_crc32c"));
  EXPECT_FALSE(UserXattrs::Accepts("user."));
  EXPECT_FALSE(UserXattrs::Accepts("user.kvfs.stats"));
  EXPECT_FALSE(UserXattrs::Accepts("security.capability"));
  EXPECT_FALSE(UserXattrs::Accepts("trusted.x"));
}

TEST(UserXattrsTest, SetGetRemoveFollowSetxattrsFlags) {
  UserXattrs x;
  EXPECT_EQ(x.Get("user.a").status().code(), StatusCode::kNoData);
  EXPECT_EQ(x.Set("user.a", "1", Mode::kReplace).code(), StatusCode::kNoData);
  ASSERT_TRUE(x.Set("user.a", "1", Mode::kCreate).ok());
  EXPECT_EQ(x.Set("user.a", "2", Mode::kCreate).code(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(x.Set("user.a", "2", Mode::kReplace).ok());
  ASSERT_TRUE(x.Set("user.b", std::string("\0\xff", 2), Mode::kAny).ok());
  EXPECT_EQ(*x.Get("user.a"), "2");
  EXPECT_EQ(x.Names(), std::string("user.a\0user.b\0", 14));
  ASSERT_TRUE(x.Remove("user.a").ok());
  EXPECT_EQ(x.Remove("user.a").code(), StatusCode::kNoData);
  EXPECT_EQ(x.Names(), std::string("user.b\0", 7));
}

TEST(UserXattrsTest, EncodesToPrintableAsciiAndBack) {
  UserXattrs x;
  ASSERT_TRUE(x.Set("user.vllm.kv_crc32c", std::string("\x12\x34\0\xab", 4), Mode::kAny).ok());
  ASSERT_TRUE(x.Set("user.a=b&c", "x y", Mode::kAny).ok());
  const std::string e = x.Encode();
  EXPECT_EQ(e, "user.a%3Db%26c=x%20y&user.vllm.kv_crc32c=%124%00%AB");
  for (char c : e) EXPECT_TRUE(c > 0x20 && c < 0x7f) << e;
  auto back = UserXattrs::Decode(e);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, x);
  EXPECT_TRUE(UserXattrs::Decode("")->empty());
}

TEST(UserXattrsTest, DecodeRefusesWhatKvfsNeverWrites) {
  for (const char* bad :
       {"user.a", "user.a=1&", "user.a=%4", "user.a=%zz", "user.a=%41", "user.a=a b",
        "user.b=1&user.a=1", "user.a=1&user.a=2", "x.a=1", "user.kvfs.x=1"}) {
    EXPECT_EQ(UserXattrs::Decode(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(UserXattrsTest, TheEncodingIsBoundedAndAFailedSetChangesNothing) {
  UserXattrs x;
  ASSERT_TRUE(x.Set("user.a", std::string(700, 'v'), Mode::kAny).ok());
  Status st = x.Set("user.b", std::string(100, 'v'), Mode::kAny);
  EXPECT_EQ(st.code(), StatusCode::kNoSpace) << st.ToString();
  EXPECT_EQ(x.Get("user.b").status().code(), StatusCode::kNoData);
  EXPECT_LE(x.Encode().size(), UserXattrs::kMaxEncodedBytes);
  EXPECT_EQ(UserXattrs::Decode(std::string(UserXattrs::kMaxEncodedBytes + 1, 'a')).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kvfs
