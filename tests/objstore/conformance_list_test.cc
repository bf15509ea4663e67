// Object-store conformance: key bytes, listing order, pagination, delimiters.
#include <algorithm>
#include <random>

#include "tests/objstore/conformance_fixture.h"

namespace kvfs::testing {
namespace {

// Keys real users have: LMCache names, spaces, escapes, unicode, slashes.
std::vector<std::string> OddKeys() {
  return {
      "meta-llama-Llama-3.1-8B-Instruct@1@0@1a2b3c4d5e6f7081@bfloat16.pt",
      "model@1@0@abc@bfloat16@k%v.pt",
      "with space",
      " leading and trailing ",
      "100%",
      "%2F not an escape",
      "a+b=c",
      "x@y",
      "ünïcødé-日本語-🙂",
      "dir/sub/file",
      "trailing/",
      "//double//slash",
      "query?a=1&b=2#frag",
      "~!$'()*,;:[]{}",
      ".",
      "..",
      ".hidden",
      "UPPER",
      "lower",
  };
}

TEST_P(ConformanceTest, KeyBytesRoundTrip) {
  auto keys = OddKeys();
  for (const auto& key : keys) {
    auto put = PutString(key, "content of " + key);
    ASSERT_TRUE(put.ok()) << "[" << key << "] " << put.status().ToString();
  }
  for (const auto& key : keys) {
    auto head = store().Head(key);
    ASSERT_TRUE(head.ok()) << "[" << key << "] " << head.status().ToString();
    EXPECT_EQ(head->size, key.size() + 11) << key;
    auto got = GetString(key);
    ASSERT_TRUE(got.ok()) << "[" << key << "] " << got.status().ToString();
    EXPECT_EQ(*got, "content of " + key);
    ListRequest req;
    req.prefix = key;
    auto one = store().List(req);
    ASSERT_TRUE(one.ok()) << "[" << key << "] " << one.status().ToString();
    ASSERT_FALSE(one->objects.empty()) << "[" << key << "]";
    EXPECT_EQ(one->objects[0].key, key);
  }
  // The whole listing is in ascending (unsigned) byte order.
  std::sort(keys.begin(), keys.end());
  auto all = ListAll({});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->keys, keys);
  for (const auto& key : keys) EXPECT_TRUE(store().Delete(key).ok()) << key;
  auto none = store().List({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->objects.empty());
}

TEST_P(ConformanceTest, LongKeys) {
  // S3 allows 1024 bytes of key. Multi-byte characters make the escaped form much longer.
  std::vector<std::string> keys = {std::string(1024, 'k'),      std::string(1000, 'x') + "/tail",
                                   std::string(300, '%'),       std::string(240, 'a'),
                                   std::string(239, 'a') + ".", std::string(240, 'a') + "."};
  std::string uni;
  while (uni.size() + 3 <= 1024) uni += "日";
  keys.push_back(uni);
  for (const auto& key : keys) {
    auto put = PutString(key, "v" + std::to_string(key.size()));
    ASSERT_TRUE(put.ok()) << key.size() << " bytes: " << put.status().ToString();
    auto got = GetString(key);
    ASSERT_TRUE(got.ok()) << key.size() << " bytes: " << got.status().ToString();
    EXPECT_EQ(*got, "v" + std::to_string(key.size()));
  }
  std::sort(keys.begin(), keys.end());
  auto all = ListAll({});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->keys, keys);
  EXPECT_NE(PutString(std::string(1025, 'k'), "x").status().code(), StatusCode::kOk);
}

TEST_P(ConformanceTest, PaginationPast1000Keys) {
  constexpr int kKeys = 1100;
  std::vector<std::pair<std::string, std::string>> objects;
  for (int i = 0; i < kKeys; ++i) {
    char key[32];
    std::snprintf(key, sizeof(key), "p/%05d", i);
    objects.emplace_back(key, std::to_string(i));
  }
  std::vector<std::string> want;
  for (const auto& o : objects) want.push_back(o.first);
  std::shuffle(objects.begin(), objects.end(), std::mt19937(7));
  Status put = PutMany(objects);
  ASSERT_TRUE(put.ok()) << put.ToString();
  ASSERT_TRUE(PutString("q-after", "x").ok());  // outside the prefix

  ListRequest req;
  req.prefix = "p/";
  auto first = store().List(req);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->objects.size(), 1000u) << "default page is 1000 keys";
  EXPECT_TRUE(first->truncated);
  auto all = ListAll(req);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->pages, 2);
  EXPECT_EQ(all->keys, want);

  req.max_keys = 300;
  auto paged = ListAll(req);
  ASSERT_TRUE(paged.ok()) << paged.status().ToString();
  EXPECT_EQ(paged->pages, 4);
  EXPECT_EQ(paged->keys, want);
}

TEST_P(ConformanceTest, DelimiterAndCommonPrefixes) {
  std::vector<std::string> keys = {"a/1",   "a/2", "b/1",   "c",    "d/e/f",
                                   "p/x/1", "p/y", "p/x/2", "p/z/", "p/"};
  std::vector<std::pair<std::string, std::string>> objects;
  for (const auto& k : keys) objects.emplace_back(k, k);
  ASSERT_TRUE(PutMany(objects).ok());

  ListRequest req;
  req.delimiter = "/";
  auto top = ListAll(req);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  EXPECT_EQ(top->keys, (std::vector<std::string>{"c"}));
  EXPECT_EQ(top->prefixes, (std::vector<std::string>{"a/", "b/", "d/", "p/"}));

  req.prefix = "p/";
  auto sub = ListAll(req);
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  EXPECT_EQ(sub->keys, (std::vector<std::string>{"p/", "p/y"}));
  EXPECT_EQ(sub->prefixes, (std::vector<std::string>{"p/x/", "p/z/"}));

  // Pages count prefixes and keys together, and a prefix is never repeated across pages.
  req.prefix = "";
  req.max_keys = 2;
  auto paged = ListAll(req);
  ASSERT_TRUE(paged.ok()) << paged.status().ToString();
  EXPECT_EQ(paged->entries, (std::vector<std::string>{"a/", "b/", "c", "d/", "p/"}));
  EXPECT_EQ(paged->pages, 3);

  // A prefix that is not a "directory".
  ListRequest partial;
  partial.prefix = "p/x";
  partial.delimiter = "/";
  auto px = ListAll(partial);
  ASSERT_TRUE(px.ok());
  EXPECT_TRUE(px->keys.empty());
  EXPECT_EQ(px->prefixes, (std::vector<std::string>{"p/x/"}));

  // Another delimiter.
  ListRequest dash;
  dash.delimiter = "1";
  auto ones = ListAll(dash);
  ASSERT_TRUE(ones.ok());
  EXPECT_EQ(ones->prefixes, (std::vector<std::string>{"a/1", "b/1", "p/x/1"}));
}

TEST_P(ConformanceTest, ListOfEmptyPrefixAndMaxKeysOne) {
  auto empty = store().List({});
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->objects.empty());
  EXPECT_FALSE(empty->truncated);
  ASSERT_TRUE(PutMany({{"k1", "1"}, {"k2", "2"}, {"k3", "3"}}).ok());
  ListRequest req;
  req.max_keys = 1;
  auto all = ListAll(req);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->keys, (std::vector<std::string>{"k1", "k2", "k3"}));
  EXPECT_EQ(all->pages, 3);
  ListRequest nothing;
  nothing.prefix = "zzz";
  auto none = store().List(nothing);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->objects.empty());
}

}  // namespace
}  // namespace kvfs::testing
