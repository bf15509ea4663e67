#include "fs/dir_listing_cache.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>

#include "objstore/store_wrapper.h"
#include "tests/fakes/memory_store.h"

namespace kvfs {
namespace {

using std::chrono::seconds;

class DirListingCacheTest : public ::testing::Test {
 protected:
  DirListingCache Make(size_t max_entries = 100000, size_t max_total_names = 200000) {
    DirListingCache::Options o;
    o.ttl = seconds(30);
    o.max_entries = max_entries;
    o.max_total_names = max_total_names;
    o.misses_before_listing = 3;
    return DirListingCache(store_, o, [this] { return now_; });
  }
  std::shared_ptr<MemoryStore> store_ = std::make_shared<MemoryStore>();
  std::chrono::steady_clock::time_point now_ = std::chrono::steady_clock::time_point() + seconds(1);
};

TEST_F(DirListingCacheTest, DirOf) {
  EXPECT_EQ(DirListingCache::DirOf("a"), "");
  EXPECT_EQ(DirListingCache::DirOf("p/a"), "p/");
  EXPECT_EQ(DirListingCache::DirOf("p/q/a"), "p/q/");
}

TEST_F(DirListingCacheTest, MissesTriggerOneListingThenAnswerLocally) {
  store_->PutObject("p/present", "x");
  store_->PutObject("p/sub/deeper", "y");
  DirListingCache c = Make();
  EXPECT_FALSE(c.KnownMissing("p/m1"));  // nothing listed yet: ask the store
  c.NoteMiss("p/m1");
  c.NoteMiss("p/m2");
  EXPECT_EQ(store_->Calls(StoreOp::kList), 0u);
  c.NoteMiss("p/m3");
  EXPECT_EQ(store_->Calls(StoreOp::kList), 1u);
  EXPECT_EQ(c.listings(), 1u);
  EXPECT_TRUE(c.KnownMissing("p/m4"));
  EXPECT_FALSE(c.KnownMissing("p/present"));  // a file
  EXPECT_FALSE(c.KnownMissing("p/sub"));      // a directory
  EXPECT_FALSE(c.KnownMissing("q/other"));    // another directory was never listed
  c.NoteMiss("p/m5");                         // answered by the fresh listing: no new LIST
  EXPECT_EQ(store_->Calls(StoreOp::kList), 1u);
}

TEST_F(DirListingCacheTest, NamesAcrossListingsStayWithinTheBound) {
  // Three directories of 40 names, a bound of 100: the oldest listing goes for the newest.
  for (const char* d : {"a/", "b/", "c/"}) {
    for (int i = 0; i < 40; ++i) store_->PutObject(std::string(d) + std::to_string(i), "x");
  }
  DirListingCache c = Make(100000, /*max_total_names=*/100);
  for (const char* d : {"a/", "b/", "c/"}) {
    for (int i = 0; i < 3; ++i) c.NoteMiss(std::string(d) + "m" + std::to_string(i));
    now_ += seconds(1);
    EXPECT_LE(c.names_held(), 100u);
  }
  EXPECT_EQ(c.listings(), 3u);
  EXPECT_EQ(c.names_held(), 80u);
  EXPECT_FALSE(c.KnownMissing("a/m9"));  // dropped: asks the store again
  EXPECT_TRUE(c.KnownMissing("b/m9"));
  EXPECT_TRUE(c.KnownMissing("c/m9"));
}

TEST_F(DirListingCacheTest, AnEmptyDirectoryAnswersForEverythingBelowIt) {
  DirListingCache c = Make();
  c.RecordEmpty("p/model/");
  EXPECT_TRUE(c.KnownMissing("p/model/x"));
  EXPECT_TRUE(c.KnownMissing("p/model/a/b/c.bin"));  // any depth below
  EXPECT_FALSE(c.KnownMissing("p/model"));           // the directory itself: not known here
  EXPECT_FALSE(c.KnownMissing("p/other/x"));
  EXPECT_EQ(store_->Calls(StoreOp::kList), 0u);
  now_ += seconds(30);
  EXPECT_FALSE(c.KnownMissing("p/model/a/b/c.bin"));  // expired with the TTL
}

TEST_F(DirListingCacheTest, AListedAncestorAnswersForDeeperNames) {
  store_->PutObject("p/sub/deeper", "y");
  DirListingCache c = Make();
  for (int i = 0; i < 3; ++i) c.NoteMiss("p/m" + std::to_string(i));  // lists "p/"
  EXPECT_TRUE(c.KnownMissing("p/nodir/x/y"));   // "p/nodir" is not in the listing of "p/"
  EXPECT_FALSE(c.KnownMissing("p/sub/other"));  // "p/sub" is: "p/sub/" was never listed
}

TEST_F(DirListingCacheTest, ChunksOfOtherNodesAppearWithinTheTtl) {
  DirListingCache c = Make();
  for (int i = 0; i < 3; ++i) c.NoteMiss("p/m" + std::to_string(i));
  store_->PutObject("p/late", "z");  // uploaded by another node after the listing
  EXPECT_TRUE(c.KnownMissing("p/late"));
  now_ += seconds(30);
  EXPECT_FALSE(c.KnownMissing("p/late"));  // listing expired: the store is asked again
}

TEST_F(DirListingCacheTest, LargeDirectoriesAreNotListed) {
  for (int i = 0; i < 5; ++i) store_->PutObject("p/k" + std::to_string(i), "x");
  DirListingCache c = Make(/*max_entries=*/3);
  for (int i = 0; i < 3; ++i) c.NoteMiss("p/m" + std::to_string(i));
  EXPECT_FALSE(c.KnownMissing("p/m9"));
  uint64_t lists = store_->Calls(StoreOp::kList);
  for (int i = 0; i < 10; ++i) c.NoteMiss("p/n" + std::to_string(i));
  EXPECT_EQ(store_->Calls(StoreOp::kList), lists);  // not retried within the TTL
}

TEST_F(DirListingCacheTest, ZeroTtlDisables) {
  DirListingCache::Options o;
  o.ttl = seconds(0);
  DirListingCache c(store_, o);
  for (int i = 0; i < 20; ++i) c.NoteMiss("p/m" + std::to_string(i));
  EXPECT_FALSE(c.KnownMissing("p/x"));
  EXPECT_EQ(store_->Calls(StoreOp::kList), 0u);
}

// A server whose listing never ends (the same page again with a new or the same token) must not
// hang the lookup that triggered the listing: the loop gives up and lookups ask the store.
class EndlessListStore : public StoreWrapper {
 public:
  EndlessListStore(std::shared_ptr<ObjectStore> target, bool same_token)
      : StoreWrapper(std::move(target)), same_token_(same_token) {}
  Result<ListResult> List(const ListRequest& req) override {
    calls++;
    ListResult r;
    r.objects.push_back(ObjectInfo{req.prefix + "k", 1, "e", 0, std::nullopt});
    r.truncated = true;
    r.next_continuation_token = same_token_ ? "t" : req.continuation_token + "t";
    return r;
  }
  int calls = 0;

 private:
  const bool same_token_;
};

TEST_F(DirListingCacheTest, EndlessListingGivesUp) {
  for (bool same_token : {true, false}) {
    auto endless = std::make_shared<EndlessListStore>(store_, same_token);
    DirListingCache::Options o;
    o.misses_before_listing = 1;
    DirListingCache c(endless, o, [this] { return now_; });
    c.NoteMiss("p/m1");  // returns: the listing loop stopped
    EXPECT_LE(endless->calls, 200) << "same_token " << same_token;
    EXPECT_FALSE(c.KnownMissing("p/m2")) << "a broken listing must not answer misses";
  }
}

// Names other nodes stored since a listing (the fleet feed) end its "missing" answers for them
// and for the directories above them; they count in the bound, and a new listing keeps the ones
// added after it began.
TEST_F(DirListingCacheTest, AddedNamesAnswerAndAreCountedOnce) {
  for (int i = 0; i < 10; ++i) store_->PutObject("p/" + std::to_string(i), "x");
  DirListingCache c = Make();
  for (const char* m : {"p/m1", "p/m2", "p/m3"}) c.NoteMiss(m);
  ASSERT_EQ(c.listings(), 1u);
  EXPECT_EQ(c.names_held(), 10u);
  EXPECT_TRUE(c.KnownMissing("p/new"));
  c.NoteAdded("p/new");
  c.NoteAdded("p/new");  // once
  EXPECT_FALSE(c.KnownMissing("p/new"));
  EXPECT_EQ(c.names_held(), 11u);
  // A listing begun before the name was added keeps it added; one begun after drops it.
  const auto before = now_;
  now_ += seconds(1);
  c.NoteAdded("p/later");
  c.RecordListing("p/", {"p/0"}, before + seconds(2));
  EXPECT_EQ(c.names_held(), 1u) << "added names before the listing go with the old one";
  EXPECT_TRUE(c.KnownMissing("p/later"));
  now_ = before + seconds(3);
  c.NoteAdded("p/later");
  c.RecordListing("p/", {"p/0"}, now_);
  EXPECT_EQ(c.names_held(), 2u) << "added at the listing's start: kept";
  EXPECT_FALSE(c.KnownMissing("p/later"));
}

// The fleet feed tells of a burst of chunks while the first listing of their directory is in
// flight, its page read before they were stored: the listing must not hide them once installed
// (it did, for feed_miss_ttl_secs: LMCache's 16-chunk bursts reached a node that was looking the
// names up 10-20 s late; issue 47 item 1).
class AddingDuringListStore : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  Result<ListResult> List(const ListRequest& req) override {
    auto r = StoreWrapper::List(req);
    if (during) std::exchange(during, nullptr)();
    return r;
  }
  std::function<void()> during;
};

TEST_F(DirListingCacheTest, NamesAddedWhileTheFirstListingIsInFlightAreNotHidden) {
  store_->PutObject("p/old", "x");
  auto racing = std::make_shared<AddingDuringListStore>(store_);
  DirListingCache::Options o;
  o.ttl = seconds(30);
  o.misses_before_listing = 3;
  DirListingCache c(racing, o, [this] { return now_; });
  racing->during = [&] {
    for (const char* k : {"p/new1", "p/new2", "p/sub/new3"}) {
      store_->PutObject(k, "y");
      c.NoteAdded(k);  // the feed's event, applied while the listing's page is on its way
    }
  };
  for (const char* m : {"p/m1", "p/m2", "p/m3"}) c.NoteMiss(m);
  ASSERT_EQ(c.listings(), 1u);
  EXPECT_TRUE(c.KnownMissing("p/m4"));
  EXPECT_FALSE(c.KnownMissing("p/new1"));
  EXPECT_FALSE(c.KnownMissing("p/new2"));
  EXPECT_FALSE(c.KnownMissing("p/sub/new3"));
  EXPECT_FALSE(c.KnownMissing("p/sub"));

  // The same for a lookup's own LIST, recorded after the name arrived.
  const auto started = now_;
  now_ += seconds(1);
  c.NoteAdded("q/late");
  c.RecordListing("q/", {"q/a"}, started);
  EXPECT_TRUE(c.KnownMissing("q/other"));
  EXPECT_FALSE(c.KnownMissing("q/late"));
}

TEST_F(DirListingCacheTest, AnAddedNameBeyondTheBoundDropsTheListing) {
  DirListingCache c = Make(100000, /*max_total_names=*/3);
  c.RecordListing("p/", {"p/a", "p/b", "p/c"}, now_);
  EXPECT_TRUE(c.KnownMissing("p/d"));
  c.NoteAdded("p/d");
  EXPECT_LE(c.names_held(), 3u);
  EXPECT_FALSE(c.KnownMissing("p/d")) << "no room: the store is asked";
}

}  // namespace
}  // namespace kvfs
