// NameCodec: every legal name round-trips; keys from other tools show when canonical.
#include "fs/name_codec.h"

#include <gtest/gtest.h>

#include <random>

namespace kvfs {
namespace {

TEST(NameCodecTest, ChunkNamesStayReadable) {
  std::string n = "meta-llama-Llama-3.1-8B-Instruct@1@0@1a2b3c4d5e6f7081@bfloat16.pt";
  EXPECT_EQ(NameCodec::EncodeComponent(n), n);
  EXPECT_EQ(NameCodec::EncodeComponent("a b%c"), "a%20b%25c");
  EXPECT_EQ(*NameCodec::DecodeComponent("a%20b%25c"), "a b%c");
}

TEST(NameCodecTest, RejectsNonCanonicalAndIllegal) {
  EXPECT_FALSE(NameCodec::DecodeComponent("%41"));  // 'A' must be literal
  EXPECT_FALSE(NameCodec::DecodeComponent("%2a"));  // lower-case hex
  EXPECT_FALSE(NameCodec::DecodeComponent("a b"));  // raw space
  EXPECT_FALSE(NameCodec::DecodeComponent("%2"));   // truncated escape
  EXPECT_FALSE(NameCodec::DecodeComponent("%2F"));  // '/' is not a legal name byte
  EXPECT_FALSE(NameCodec::DecodeComponent("%00"));  // NUL
  EXPECT_FALSE(NameCodec::DecodeComponent("."));
  EXPECT_FALSE(NameCodec::DecodeComponent(".."));
  EXPECT_FALSE(NameCodec::DecodeComponent(""));
  EXPECT_TRUE(NameCodec::DecodeComponent("..."));
  EXPECT_EQ(NameCodec::ValidateName(std::string(256, 'a')).code(), StatusCode::kNameTooLong);
  EXPECT_TRUE(NameCodec::ValidateName(std::string(255, 'a')).ok());
  EXPECT_FALSE(NameCodec::ValidateName("a/b").ok());
}

TEST(NameCodecTest, PropertyRandomNamesRoundTrip) {
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 20000; ++i) {
    size_t len = 1 + rng() % 255;
    std::string name;
    for (size_t j = 0; j < len; ++j) {
      char c;
      do {
        c = static_cast<char>(rng() % 4 == 0 ? "az09-_.@%"[rng() % 9] : rng() % 256);
      } while (c == '/' || c == '\0');
      name.push_back(c);
    }
    if (name == "." || name == "..") continue;
    ASSERT_TRUE(NameCodec::ValidateName(name).ok());
    std::string enc = NameCodec::EncodeComponent(name);
    ASSERT_EQ(enc.find('/'), std::string::npos);
    auto dec = NameCodec::DecodeComponent(enc);
    ASSERT_TRUE(dec.has_value());
    ASSERT_EQ(*dec, name);
  }
}

TEST(NameCodecTest, PropertyDecodedKeysReencodeExactly) {
  // Random key components: whenever one decodes, it is the encoding of its name (bijection).
  std::mt19937_64 rng(7);
  const char alphabet[] = "aZ9-_.@%2F0A ~";
  int decoded = 0;
  for (int i = 0; i < 50000; ++i) {
    std::string comp;
    size_t len = 1 + rng() % 12;
    for (size_t j = 0; j < len; ++j) comp.push_back(alphabet[rng() % (sizeof(alphabet) - 1)]);
    auto dec = NameCodec::DecodeComponent(comp);
    if (!dec) continue;
    ++decoded;
    ASSERT_EQ(NameCodec::EncodeComponent(*dec), comp);
  }
  EXPECT_GT(decoded, 1000);
}

TEST(NameCodecTest, KeysAndLimits) {
  NameCodec c("p/", 0);
  EXPECT_EQ(*c.FileKey({"a b"}), "p/a%20b");
  EXPECT_EQ(*c.FileKey({"d", "x"}), "p/d/x");
  EXPECT_EQ(*c.DirPrefix({}), "p/");
  EXPECT_EQ(*c.DirPrefix({"d"}), "p/d/");
  EXPECT_EQ(*c.NameOfKey("p/", "p/a%20b"), "a b");
  EXPECT_FALSE(c.NameOfKey("p/", "p/"));
  EXPECT_FALSE(c.NameOfKey("p/", "p/d/x"));
  EXPECT_EQ(*c.NameOfPrefix("p/", "p/d/"), "d");
  // LMCache-style long names (> 200 bytes) work; 4 levels of 255 escaped bytes do not.
  std::string long_name = std::string(180, 'm') + "@1@0@1a2b3c4d5e6f7081@bfloat16.pt";
  EXPECT_TRUE(c.FileKey({long_name}).ok());
  std::string wide(255, ' ');
  EXPECT_EQ(c.FileKey({wide, wide}).status().code(), StatusCode::kNameTooLong);
}

TEST(NameCodecTest, FanoutIsHiddenAndFlat) {
  NameCodec c("p/", 2);
  auto key = c.FileKey({"chunk.pt"});
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->size(), std::string("p/xx/chunk.pt").size());
  EXPECT_EQ(key->substr(5), "chunk.pt");
  EXPECT_EQ(*c.NameOfKey("p/", *key), "chunk.pt");
  // A wrong fan-out component hides the key.
  std::string wrong = "p/" + std::string(key->substr(2, 2) == "00" ? "01" : "00") + "/chunk.pt";
  EXPECT_FALSE(c.NameOfKey("p/", wrong));
  EXPECT_EQ(c.FileKey({"d", "x"}).status().code(), StatusCode::kNotSupported);
  // Stable across runs: the hash is part of the key format.
  EXPECT_EQ(c.FanoutOf("chunk.pt"), NameCodec("", 2).FanoutOf("chunk.pt"));
}

}  // namespace
}  // namespace kvfs
