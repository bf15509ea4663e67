// The in-memory store behaves like S3 where the filesystem depends on it.
#include "tests/fakes/memory_store.h"

#include <gtest/gtest.h>

namespace kvfs {
namespace {

TEST(MemoryStoreTest, PutGetHeadDelete) {
  MemoryStore s;
  std::string data = "hello world";
  ASSERT_TRUE(s.Put("a/b", Body::FromMemory(data.data(), data.size())).ok());
  auto info = s.Head("a/b");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->size, data.size());
  char buf[32];
  GetRequest req;
  req.key = "a/b";
  req.offset = 6;
  auto n = s.Get(req, buf);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::string(buf, *n), "world");
  req.offset = 100;
  EXPECT_EQ(*s.Get(req, buf), 0u);
  req.offset = 0;
  req.if_match = "nope";
  EXPECT_EQ(s.Get(req, buf).status().code(), StatusCode::kPreconditionFailed);
  EXPECT_TRUE(s.Delete("a/b").ok());
  EXPECT_TRUE(s.Delete("a/b").ok());
  EXPECT_EQ(s.Head("a/b").status().code(), StatusCode::kNotFound);
}

TEST(MemoryStoreTest, ConditionalCreate) {
  MemoryStore s;
  PutOptions o;
  o.if_none_match = true;
  EXPECT_TRUE(s.Put("k", Body::FromMemory("x", 1), o).ok());
  EXPECT_EQ(s.Put("k", Body::FromMemory("y", 1), o).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(*s.GetObject("k"), "x");
  EXPECT_EQ(s.Copy("k", "k", o).status().code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(s.Copy("k", "k2", o).ok());
  EXPECT_EQ(*s.GetObject("k2"), "x");
}

TEST(MemoryStoreTest, Multipart) {
  MemoryStore s;
  s.SetMinPartSize(2);
  auto id = s.CreateMultipartUpload("m", {});
  ASSERT_TRUE(id.ok());
  auto e1 = s.UploadPart("m", *id, 1, Body::FromMemory("ab", 2));
  auto e2 = s.UploadPart("m", *id, 2, Body::FromMemory("c", 1));
  ASSERT_TRUE(e1.ok() && e2.ok());
  EXPECT_FALSE(s.GetObject("m"));
  auto r = s.CompleteMultipartUpload("m", *id, {{1, *e1}, {2, *e2}}, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size, 3u);
  EXPECT_EQ(*s.GetObject("m"), "abc");
  EXPECT_EQ(s.PendingUploadCount(), 0u);
  auto id2 = s.CreateMultipartUpload("m", {});
  EXPECT_EQ(s.PendingUploadCount(), 1u);
  EXPECT_TRUE(s.AbortMultipartUpload("m", *id2).ok());
  EXPECT_EQ(s.PendingUploadCount(), 0u);
}

TEST(MemoryStoreTest, ListWithDelimiterAndPages) {
  MemoryStore s;
  for (int i = 0; i < 25; ++i) s.PutObject("p/f" + std::to_string(100 + i), "x");
  s.PutObject("p/d1/a", "x");
  s.PutObject("p/d1/b", "x");
  s.PutObject("p/d2/a", "x");
  s.PutObject("q", "x");
  std::vector<std::string> keys, prefixes;
  ListRequest req;
  req.prefix = "p/";
  req.delimiter = "/";
  req.max_keys = 4;
  int pages = 0;
  for (;;) {
    auto r = s.List(req);
    ASSERT_TRUE(r.ok());
    ++pages;
    for (auto& o : r->objects) keys.push_back(o.key);
    for (auto& p : r->common_prefixes) prefixes.push_back(p);
    if (!r->truncated) break;
    req.continuation_token = r->next_continuation_token;
  }
  EXPECT_EQ(keys.size(), 25u);
  EXPECT_EQ(prefixes, (std::vector<std::string>{"p/d1/", "p/d2/"}));
  EXPECT_EQ(pages, 7);
}

}  // namespace
}  // namespace kvfs
