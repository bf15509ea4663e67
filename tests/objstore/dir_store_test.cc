// Directory-store internals: the key codec, the on-disk layout, and what only a local
// directory can show (stray files, crashed writers, concurrent overwrites).
#include "objstore/dir/dir_store.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "objstore/dir/dir_key_codec.h"

namespace kvfs {
namespace {

namespace fs = std::filesystem;
using dirstore::DecodeComponent;
using dirstore::EncodeKey;

std::string Decode(const std::vector<std::string>& comps) {
  std::string key;
  for (size_t i = 0; i < comps.size(); ++i) {
    std::string c = comps[i];
    if (i + 1 < comps.size()) {
      EXPECT_EQ(c.back(), '+');
      c.pop_back();
    }
    auto part = DecodeComponent(c);
    EXPECT_TRUE(part.has_value()) << c;
    key += part.value_or("");
  }
  return key;
}

TEST(DirKeyCodec, RoundTripsRandomKeys) {
  std::mt19937 rng(42);
  std::set<std::string> paths;
  for (int i = 0; i < 3000; ++i) {
    size_t len = 1 + rng() % (i % 10 == 0 ? 1024 : 300);
    std::string key(len, '\0');
    for (auto& c : key) c = static_cast<char>(i % 3 == 0 ? "./%+a"[rng() % 5] : rng() % 256);
    auto comps = EncodeKey(key);
    ASSERT_TRUE(comps.ok()) << comps.status().ToString();
    for (size_t j = 0; j < comps->size(); ++j) {
      const std::string& c = (*comps)[j];
      EXPECT_LE(c.size(), 241u);
      EXPECT_NE(c[0], '.') << "no hidden, '.' or '..' components";
      EXPECT_EQ(c.find('/'), std::string::npos);
      EXPECT_EQ(c.back() == '+', j + 1 < comps->size());
    }
    EXPECT_EQ(Decode(*comps), key);
    paths.insert(dirstore::JoinPath(*comps) + "|" + key);
  }
}

TEST(DirKeyCodec, TrickyKeysGetDistinctPaths) {
  std::vector<std::string> keys = {"a/b", "a%2Fb", "a%2fb", "a+b", "a b", ".", "..", "%2E", "..."};
  keys.push_back(std::string(240, 'x'));
  keys.push_back(std::string(240, 'x') + "y");
  keys.push_back(std::string(240, 'x') + "+");
  std::set<std::string> paths;
  for (const auto& k : keys) paths.insert(dirstore::JoinPath(*EncodeKey(k)));
  EXPECT_EQ(paths.size(), keys.size());
  EXPECT_EQ(EncodeKey("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(EncodeKey(std::string(1025, 'a')).status().code(), StatusCode::kNameTooLong);
  EXPECT_FALSE(DecodeComponent("a%2f").has_value()) << "lower-case escapes are not canonical";
  EXPECT_FALSE(DecodeComponent("a b").has_value());
  EXPECT_FALSE(DecodeComponent("a%2").has_value());
}

class DirStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "kvfs-dirtest-XXXXXX").string();
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    base_ = templ;
    root_ = base_ + "/a/b/root";
    auto s = NewDirStore(root_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = *s;
  }
  void TearDown() override { fs::remove_all(base_); }

  Result<ObjectInfo> Put(const std::string& key, const std::string& data, bool create = false) {
    PutOptions o;
    o.if_none_match = create;
    return store_->Put(key, Body::FromMemory(data.data(), data.size()), o);
  }

  std::string base_, root_;
  std::shared_ptr<ObjectStore> store_;
};

TEST_F(DirStoreTest, CreatesRootPrivateAndDescribes) {
  struct stat st;
  ASSERT_EQ(::stat(root_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(store_->Describe(), "file://" + root_);
  EXPECT_TRUE(store_->CheckAccess().ok());
  auto url = NewDirStore("file://" + root_ + "/");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ((*url)->Describe(), "file://" + root_);
}

TEST_F(DirStoreTest, ObjectsSurviveReopenAndUseReadableNames) {
  ASSERT_TRUE(Put("model@1@0@abc@bfloat16.pt", "data").ok());
  EXPECT_TRUE(fs::exists(root_ + "/objects/model@1@0@abc@bfloat16.pt"));
  ASSERT_TRUE(Put("a/b c", "x").ok());
  EXPECT_TRUE(fs::exists(root_ + "/objects/a%2Fb%20c"));
  auto reopened = NewDirStore(root_);
  ASSERT_TRUE(reopened.ok());
  auto head = (*reopened)->Head("model@1@0@abc@bfloat16.pt");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->size, 4u);
}

TEST_F(DirStoreTest, ListingIgnoresStrayFiles) {
  ASSERT_TRUE(Put("real", "1").ok());
  std::ofstream(root_ + "/objects/not canonical") << "x";
  std::ofstream(root_ + "/objects/lower%2fcase") << "x";
  std::ofstream(root_ + "/objects/dirmark+") << "x";  // a file with a directory marker
  fs::create_directories(root_ + "/objects/plaindir");
  auto list = store_->List({});
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->objects.size(), 1u);
  EXPECT_EQ(list->objects[0].key, "real");
}

TEST_F(DirStoreTest, RemovesStaleTempFilesAtOpen) {
  std::string stale = root_ + "/tmp/crashed.1.2.ab", fresh = root_ + "/tmp/inflight.1.3.cd";
  std::ofstream(stale) << "x";
  std::ofstream(fresh) << "x";
  struct timespec old[2] = {{1000, 0}, {1000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, stale.c_str(), old, 0), 0);
  ASSERT_TRUE(NewDirStore(root_).ok());
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh)) << "another process may be writing it";
}

TEST_F(DirStoreTest, BadUploadIdsAreNotFound) {
  for (const std::string& id : std::vector<std::string>{
           "../../objects", "", "zz", std::string(32, 'g'), std::string(32, 'a')}) {
    EXPECT_EQ(store_->AbortMultipartUpload("k", id).code(), StatusCode::kNotFound) << id;
  }
  auto id = store_->CreateMultipartUpload("k");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(store_->AbortMultipartUpload("other-key", *id).code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->AbortMultipartUpload("k", *id).ok());
}

TEST_F(DirStoreTest, BodyFromFile) {
  std::string path = base_ + "/body";
  std::ofstream(path) << "0123456789";
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  auto put = store_->Put("f", Body::FromFile(fd, 2, 5));
  ::close(fd);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  char buf[8];
  GetRequest req;
  req.key = "f";
  req.length = 5;
  auto got = store_->Get(req, buf);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(std::string(buf, *got), "23456");
}

// Readers see the old or the new object, never a mix, while a writer replaces it.
TEST_F(DirStoreTest, OverwriteIsAtomicForReaders) {
  const size_t kSize = 256 * 1024;
  std::string a(kSize, 'a'), b(kSize, 'b');
  ASSERT_TRUE(Put("hot", a).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> mixed{0}, reads{0};
  std::thread reader([&] {
    std::string buf(kSize, '\0');
    while (!stop) {
      GetRequest req;
      req.key = "hot";
      req.length = kSize;
      auto n = store_->Get(req, buf.data());
      if (!n.ok() || *n != kSize || (buf != a && buf != b)) ++mixed;
      ++reads;
    }
  });
  for (int i = 0; i < 200 || reads.load() < 20; ++i) ASSERT_TRUE(Put("hot", i % 2 ? a : b).ok());
  stop = true;
  reader.join();
  EXPECT_EQ(mixed.load(), 0);
}

// Long keys share directories; deletes prune them while other writers create files in them.
TEST_F(DirStoreTest, ConcurrentPutDeleteOfNestedKeys) {
  std::string stem(300, 'n');
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::string key = stem + std::to_string(t);
      for (int i = 0; i < 200; ++i) {
        if (!Put(key, "v").ok()) ++errors;
        if (!store_->Delete(key).ok()) ++errors;
      }
      if (!Put(key, "final").ok()) ++errors;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  auto list = store_->List({});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->objects.size(), 4u);
  for (const auto& e : fs::directory_iterator(root_ + "/tmp")) ADD_FAILURE() << e.path();
}

TEST_F(DirStoreTest, InvalidContinuationToken) {
  ListRequest req;
  req.continuation_token = "x-not-a-token";
  EXPECT_EQ(store_->List(req).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kvfs
