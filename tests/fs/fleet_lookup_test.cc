// What a node sees of the other nodes' chunks, at the default settings: a miss holds for
// negative_ttl_ms however many misses the directory had (no listing hides a new chunk longer), a
// lookup costs at most one request, a HEAD where one answers (chunk directories); a refused
// rewrite leaves the chunk; a directory whose names this node unlinked (unlink_policy local) is
// empty and removable here. Store requests are counted on the in-memory store; the clock is the
// test's.
#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

using std::chrono::milliseconds;

class FleetLookupTest : public FsTestBase {
 protected:
  uint64_t Requests() {
    return mem_->Calls(StoreOp::kHead) + mem_->Calls(StoreOp::kGet) + mem_->Calls(StoreOp::kList);
  }
  // Another node stores `key` (straight into the store).
  void OtherNodeStores(const std::string& name, const std::string& data = "chunk") {
    mem_->PutObject("p/" + name, data);
  }
  uint64_t MkdirAt(uint64_t parent, const std::string& name) {
    auto e = fs_->Mkdir(parent, name);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? e->attr.ino : 0;
  }
};

TEST_F(FleetLookupTest, DefaultsAreTheFleetsBound) {
  const FsOptions& d = DefaultFsOptions();
  EXPECT_EQ(d.negative_ttl_ms, 500u);
  EXPECT_EQ(d.metadata_ttl_secs, 30u);
}

// The defect of issue "Seen by the fleet at once": after a few misses a directory was listed and
// further misses answered from the listing for the whole metadata TTL (30 s).
TEST_F(FleetLookupTest, ANewChunkIsFoundAfterTheNegativeTtlHoweverManyMissesCame) {
  options_.subdirectories = false;
  Mount();
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(fs_->Lookup(1, "never-" + std::to_string(i) + ".bin").status().code(),
              StatusCode::kNotFound);
  }
  EXPECT_EQ(mem_->Calls(StoreOp::kList), 0u) << "misses alone never list the directory";
  EXPECT_EQ(fs_->Lookup(1, "fresh.bin").status().code(), StatusCode::kNotFound);
  // The kernel is told to keep the miss no longer than the negative TTL.
  EXPECT_GT(fs_->MissTtlSecs(1, "fresh.bin"), 0.0);
  EXPECT_LE(fs_->MissTtlSecs(1, "fresh.bin"), 0.5);
  OtherNodeStores("fresh.bin");
  now_ += milliseconds(400);
  EXPECT_EQ(fs_->Lookup(1, "fresh.bin").status().code(), StatusCode::kNotFound)
      << "within the negative TTL the miss holds (no request)";
  now_ += milliseconds(101);
  auto e = fs_->Lookup(1, "fresh.bin");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->attr.size, 5u);
}

TEST_F(FleetLookupTest, AMissCostsOneHeadAndRepeatsWithinTheTtlCostNothing) {
  options_.subdirectories = false;
  Mount();
  for (int i = 0; i < 50; ++i) {
    const std::string n = "k" + std::to_string(i) + ".bin";
    const uint64_t before = Requests();
    EXPECT_FALSE(fs_->Lookup(1, n).ok());
    EXPECT_EQ(Requests() - before, 1u) << n;
    EXPECT_FALSE(fs_->Lookup(1, n).ok());
    EXPECT_EQ(Requests() - before, 1u) << n << ": asked again within the TTL";
  }
  EXPECT_EQ(mem_->Calls(StoreOp::kList), 0u);
}

TEST_F(FleetLookupTest, NegativeTtlZeroAsksTheStoreEachTime) {
  options_.subdirectories = false;
  options_.negative_ttl_ms = 0;
  Mount();
  EXPECT_FALSE(fs_->Lookup(1, "a.bin").ok());
  EXPECT_EQ(fs_->MissTtlSecs(1, "a.bin"), 0.0);
  OtherNodeStores("a.bin");
  EXPECT_TRUE(fs_->Lookup(1, "a.bin").ok());
}

// vLLM's tree: in a leaf directory where lookups found chunks, a lookup is one HEAD, not a LIST.
TEST_F(FleetLookupTest, InAChunkDirectoryALookupIsOneHead) {
  Mount();
  const uint64_t d = MkdirAt(1, "de_g0");
  ASSERT_TRUE(WriteFile("first.bin", "chunk", d).ok());
  OtherNodeStores("de_g0/second.bin");
  now_ += milliseconds(501);  // mkdir's lookup found the directory empty: that miss holds 500 ms
  const uint64_t lists = mem_->Calls(StoreOp::kList);
  const uint64_t before = Requests();
  EXPECT_TRUE(fs_->Lookup(d, "second.bin").ok());
  for (int i = 0; i < 20; ++i) {
    EXPECT_FALSE(fs_->Lookup(d, "missing-" + std::to_string(i) + ".bin").ok());
  }
  EXPECT_EQ(Requests() - before, 21u) << "one request per name";
  EXPECT_EQ(mem_->Calls(StoreOp::kList), lists) << "no LIST where a HEAD answers";
  // A new chunk there shows after the negative TTL.
  OtherNodeStores("de_g0/missing-3.bin");
  now_ += milliseconds(501);
  EXPECT_TRUE(fs_->Lookup(d, "missing-3.bin").ok());
}

// A name without an extension may be a directory another node made among the chunks: the HEAD's
// 404 is followed by a LIST, so it is found.
TEST_F(FleetLookupTest, ADirectoryAmongChunksIsStillFound) {
  Mount();
  const uint64_t d = MkdirAt(1, "mixed");
  ASSERT_TRUE(WriteFile("a.bin", "chunk", d).ok());
  OtherNodeStores("mixed/sub/x.bin");
  now_ += milliseconds(501);
  auto e = fs_->Lookup(d, "sub");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_TRUE(e->attr.is_dir);
  // ... and the directory now lists subdirectories: lookups there are LISTs again.
  const uint64_t lists = mem_->Calls(StoreOp::kList);
  EXPECT_FALSE(fs_->Lookup(d, "nothing.bin").ok());
  EXPECT_EQ(mem_->Calls(StoreOp::kList), lists + 1);
}

// Item 6: a rewrite refused with EEXIST (another size) left the name ENOENT on its node.
TEST_F(FleetLookupTest, ARefusedRewriteLeavesTheChunkReadable) {
  Mount();
  ASSERT_TRUE(WriteFile("c.bin", "first").ok());
  auto e = fs_->Lookup(1, "c.bin");
  ASSERT_TRUE(e.ok());
  const uint64_t ino = e->attr.ino;
  auto o = fs_->Open(ino, O_WRONLY | O_TRUNC);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  WriteAt(o->fh, 0, "another size");
  EXPECT_EQ(ToErrno(CloseHandle(o->fh)), EEXIST);
  auto again = fs_->Lookup(1, "c.bin");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->attr.ino, ino) << "the kernel's inode of the name stays valid";
  auto r = fs_->Open(ino, O_RDONLY);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  fs_->Release(r->fh);
  EXPECT_EQ(*ReadFile("c.bin"), "first");
}

// Item 7: mkdir d; echo x > d/f; rm d/f; rmdir d failed with EEXIST under unlink_policy local.
TEST_F(FleetLookupTest, ADirectoryEmptiedHereIsRemovableHere) {
  Mount();
  const uint64_t d = MkdirAt(1, "d");
  ASSERT_TRUE(WriteFile("f", "x\n", d).ok());
  ASSERT_TRUE(fs_->Unlink(d, "f").ok());
  ASSERT_TRUE(fs_->Rmdir(1, "d").ok());
  EXPECT_EQ(fs_->Lookup(1, "d").status().code(), StatusCode::kNotFound);
  now_ += std::chrono::seconds(60);  // past every TTL: the store still holds p/d/f
  EXPECT_TRUE(mem_->GetObject("p/d/f").has_value());
  EXPECT_EQ(fs_->Lookup(1, "d").status().code(), StatusCode::kNotFound)
      << "a directory holding only names unlinked here is not there here";
  // Another node's name under it makes it a directory again.
  OtherNodeStores("d/g.bin");
  now_ += std::chrono::seconds(1);
  auto e = fs_->Lookup(1, "d");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_TRUE(e->attr.is_dir);
  EXPECT_EQ(fs_->Rmdir(1, "d").code(), StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace kvfs
