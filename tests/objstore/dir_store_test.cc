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
#include "objstore/dir/dir_tree_walker.h"

namespace kvfs {
namespace {

namespace fs = std::filesystem;
using dirstore::DecodeComponent;
using dirstore::EncodeKey;

using dirstore::KeyLayout;

std::string Decode(const std::vector<std::string>& comps) {
  std::string key;
  for (size_t i = 0; i < comps.size(); ++i) {
    std::string c = comps[i];
    std::string tail;
    if (i + 1 < comps.size()) {
      EXPECT_TRUE(c.back() == '+' || c.back() == '=') << c;
      if (c.back() == '=') tail = "/";
      c.pop_back();
    } else if (c == "%") {
      c.clear();  // the key ends in '/'
    }
    auto part = DecodeComponent(c);
    EXPECT_TRUE(part.has_value()) << c;
    key += part.value_or("") + tail;
  }
  return key;
}

class DirKeyCodec : public ::testing::TestWithParam<KeyLayout> {};

TEST_P(DirKeyCodec, RoundTripsRandomKeys) {
  std::mt19937 rng(42);
  std::set<std::string> paths;
  for (int i = 0; i < 3000; ++i) {
    size_t len = 1 + rng() % (i % 10 == 0 ? 1024 : 300);
    std::string key(len, '\0');
    for (auto& c : key) c = static_cast<char>(i % 3 == 0 ? "./%+=a"[rng() % 6] : rng() % 256);
    auto comps = EncodeKey(key, GetParam());
    ASSERT_TRUE(comps.ok()) << comps.status().ToString();
    for (size_t j = 0; j < comps->size(); ++j) {
      const std::string& c = (*comps)[j];
      EXPECT_LE(c.size(), 241u);
      EXPECT_FALSE(c.empty());
      EXPECT_NE(c[0], '.') << "no hidden, '.' or '..' components";
      EXPECT_EQ(c.find('/'), std::string::npos);
      EXPECT_EQ(c.back() == '+' || c.back() == '=', j + 1 < comps->size());
    }
    if (GetParam() == KeyLayout::kFlat) {
      EXPECT_NE(comps->back(), "%");
    }
    EXPECT_EQ(Decode(*comps), key);
    paths.insert(dirstore::JoinPath(*comps) + "|" + key);
  }
}

TEST_P(DirKeyCodec, TrickyKeysGetDistinctPaths) {
  std::vector<std::string> keys = {"a/b", "a%2Fb", "a%2fb", "a+b", "a b",  ".", "..",
                                   "%2E", "...",   "a/",    "a//", "a//b", "/", "//",
                                   "a=",  "a=/b",  "%",     "/%",  "a/%"};
  keys.push_back(std::string(240, 'x'));
  keys.push_back(std::string(240, 'x') + "y");
  keys.push_back(std::string(240, 'x') + "+");
  keys.push_back(std::string(240, 'x') + "/");
  keys.push_back(std::string(239, 'x') + "/y");
  std::set<std::string> paths;
  for (const auto& k : keys) paths.insert(dirstore::JoinPath(*EncodeKey(k, GetParam())));
  EXPECT_EQ(paths.size(), keys.size());
  EXPECT_EQ(EncodeKey("", GetParam()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(EncodeKey(std::string(1025, 'a'), GetParam()).status().code(),
            StatusCode::kNameTooLong);
  EXPECT_FALSE(DecodeComponent("a%2f").has_value()) << "lower-case escapes are not canonical";
  EXPECT_FALSE(DecodeComponent("a b").has_value());
  EXPECT_FALSE(DecodeComponent("a%2").has_value());
}

TEST(DirKeyCodecTree, EverySlashIsADirectory) {
  auto comps = EncodeKey("p/~kvfs-feed/n1-7", KeyLayout::kTree);
  ASSERT_TRUE(comps.ok());
  EXPECT_EQ(dirstore::JoinPath(*comps), "p=/~kvfs-feed=/n1-7");
  EXPECT_EQ(dirstore::JoinPath(*EncodeKey("d/", KeyLayout::kTree)), "d=/%");
  EXPECT_EQ(dirstore::JoinPath(*EncodeKey("/x", KeyLayout::kTree)), "=/x");
  EXPECT_EQ(dirstore::JoinPath(*EncodeKey("p/~kvfs-feed/n1-7", KeyLayout::kFlat)),
            "p%2F~kvfs-feed%2Fn1-7");
}

INSTANTIATE_TEST_SUITE_P(Layouts, DirKeyCodec,
                         ::testing::Values(KeyLayout::kFlat, KeyLayout::kTree),
                         [](const auto& info) {
                           return info.param == KeyLayout::kTree ? std::string("Tree")
                                                                 : std::string("Flat");
                         });

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
  EXPECT_TRUE(fs::exists(root_ + "/objects/a=/b%20c"));
  EXPECT_TRUE(fs::exists(root_ + "/layout"));
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
  auto id = store_->CreateMultipartUpload("k", {});
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

// The listing a stateless S3 server gives: keys in byte order, the keys of a common prefix as one
// entry, cut into pages of max_keys.
std::vector<std::string> ModelListing(const std::set<std::string>& keys, const std::string& prefix,
                                      const std::string& delimiter) {
  std::vector<std::string> out;
  for (const auto& k : keys) {
    if (k.compare(0, prefix.size(), prefix) != 0) continue;
    size_t pos = delimiter.empty() ? std::string::npos : k.find(delimiter, prefix.size());
    std::string item =
        pos == std::string::npos ? "k:" + k : "p:" + k.substr(0, pos + delimiter.size());
    if (item[0] == 'p' && !out.empty() && out.back() == item) continue;
    out.push_back(item);
  }
  return out;
}

std::vector<std::string> PagedListing(ObjectStore* store, const std::string& prefix,
                                      const std::string& delimiter, int max_keys) {
  std::vector<std::string> out;
  ListRequest req;
  req.prefix = prefix;
  req.delimiter = delimiter;
  req.max_keys = max_keys;
  for (int page = 0; page < 100000; ++page) {
    auto list = store->List(req);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    if (!list.ok()) break;
    // Keys and prefixes of one page merged in order, as S3 counts them against max_keys.
    std::vector<std::string> items;
    for (const auto& o : list->objects) items.push_back("k:" + o.key);
    for (const auto& p : list->common_prefixes) items.push_back("p:" + p);
    std::sort(items.begin(), items.end(),
              [](const std::string& a, const std::string& b) { return a.substr(2) < b.substr(2); });
    EXPECT_LE(items.size(), static_cast<size_t>(max_keys));
    out.insert(out.end(), items.begin(), items.end());
    if (!list->truncated) break;
    req.continuation_token = list->next_continuation_token;
  }
  return out;
}

class DirStoreLayoutTest : public DirStoreTest, public ::testing::WithParamInterface<KeyLayout> {
 protected:
  void SetUp() override {
    DirStoreTest::SetUp();
    if (GetParam() == KeyLayout::kFlat) {
      // A root made before the tree layout: objects in objects/, no layout file.
      fs::remove(root_ + "/layout");
      std::ofstream(root_ + "/objects/old") << "x";
      auto s = NewDirStore(root_);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      store_ = *s;
      ASSERT_TRUE(store_->Delete("old").ok());
    }
  }
};

TEST_P(DirStoreLayoutTest, KeepsItsLayoutAcrossReopens) {
  ASSERT_TRUE(Put("d/k", "1").ok());
  EXPECT_EQ(fs::exists(root_ + "/objects/d=/k"), GetParam() == KeyLayout::kTree);
  EXPECT_EQ(fs::exists(root_ + "/objects/d%2Fk"), GetParam() == KeyLayout::kFlat);
  auto reopened = NewDirStore(root_);
  ASSERT_TRUE(reopened.ok());
  EXPECT_TRUE((*reopened)->Head("d/k").ok());
  ASSERT_TRUE((*reopened)->Put("d/j", Body::FromMemory("2", 1)).ok());
  auto list = store_->List({});
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->objects.size(), 2u);
  EXPECT_EQ(list->objects[0].key, "d/j");
}

// Random keys full of the codec's corner cases ('/', empty segments, keys ending in '/', long
// segments cut into directories, '%', '+', '='), listed in pages of several sizes, with and
// without a delimiter, under several prefixes, against the model.
TEST_P(DirStoreLayoutTest, ListsLikeS3) {
  std::mt19937 rng(7);
  std::set<std::string> keys;
  const std::string alphabet = "ab/%+=.~";
  while (keys.size() < 600) {
    size_t len = 1 + rng() % (keys.size() % 50 == 0 ? 300 : 8);
    std::string key(len, 'a');
    for (auto& c : key) c = alphabet[rng() % alphabet.size()];
    if (keys.size() % 97 == 0) key = std::string(250, 'a') + key;
    if (keys.insert(key).second) {
      ASSERT_TRUE(Put(key, "v").ok()) << key;
    }
  }
  const std::vector<std::string> prefixes = {
      "", "a", "a/", "/", "b/a", "a//", std::string(250, 'a')};
  for (const std::string& prefix : prefixes) {
    for (const std::string delimiter : {"", "/", "a/", "%"}) {
      const auto want = ModelListing(keys, prefix, delimiter);
      for (int max_keys : {1, 7, 1000}) {
        if (max_keys == 1 && want.size() > 200) continue;  // slow in a debug build
        EXPECT_EQ(PagedListing(store_.get(), prefix, delimiter, max_keys), want)
            << "prefix '" << prefix << "' delimiter '" << delimiter << "' max_keys " << max_keys;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, DirStoreLayoutTest,
                         ::testing::Values(KeyLayout::kFlat, KeyLayout::kTree),
                         [](const auto& info) {
                           return info.param == KeyLayout::kTree ? std::string("Tree")
                                                                 : std::string("Flat");
                         });

// The fleet feed lists "p/~kvfs-feed/" every 400 ms on every mount: in the tree layout that
// listing reads the feed's directory, not the names of the chunks beside it.
TEST_F(DirStoreTest, AListingUnderAPrefixReadsOnlyItsDirectory) {
  auto unsynced = NewDirStore(root_, DirStoreOptions{.sync = false});
  ASSERT_TRUE(unsynced.ok());
  store_ = *unsynced;
  for (int i = 0; i < 5000; ++i) ASSERT_TRUE(Put("p/chunk-" + std::to_string(i), "c").ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(Put("p/~kvfs-feed/n" + std::to_string(i), "f").ok());
  dirstore::WalkBounds bounds;
  bounds.prefix = "p/~kvfs-feed/";
  bounds.limit = 1001;
  dirstore::DirTreeWalker feed(root_ + "/objects", KeyLayout::kTree, bounds);
  auto items = feed.Walk();
  ASSERT_TRUE(items.ok());
  EXPECT_EQ(items->size(), 3u);
  EXPECT_EQ(feed.names_read(), 3u);
  // A page of the chunks orders what it returns, not the directory: a later page too.
  bounds.prefix = "p/";
  bounds.limit = 11;
  bounds.has_after = true;
  bounds.after = "p/chunk-4990";
  dirstore::DirTreeWalker page(root_ + "/objects", KeyLayout::kTree, bounds);
  items = page.Walk();
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->size(), 11u);
  EXPECT_EQ((*items)[0].key, "p/chunk-4991");
  EXPECT_EQ((*items)[9].key, "p/chunk-5");
  EXPECT_EQ((*items)[10].key, "p/chunk-50");
  EXPECT_EQ(page.names_read(), 5001u) << "one readdir of the directory, nothing more";
}

TEST_F(DirStoreTest, AnUnknownLayoutIsRefusedByName) {
  std::ofstream(root_ + "/layout", std::ios::trunc) << "spiral\n";
  auto s = NewDirStore(root_);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), ::testing::HasSubstr(root_ + "/layout"));
}

}  // namespace
}  // namespace kvfs
