// The bounded tier's parts over the in-memory store (tests/fakes/memory_store.h).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/fakes/memory_store.h"
#include "tier/collector.h"
#include "tier/lease.h"
#include "tier/node_tier.h"
#include "tier/small_object.h"
#include "tier/tier_keys.h"
#include "tier/tier_policy.h"
#include "tier/tier_status.h"

namespace kvfs {
namespace {

using std::chrono::seconds;

TEST(TierPolicy, RemovesLeastRecentlyUsedDownToLowWater) {
  std::vector<TierChunk> chunks;
  for (int i = 0; i < 10; ++i) chunks.push_back({"c" + std::to_string(i), 100, 1000 + i});
  TierBounds b{/*capacity=*/500, /*max_age=*/0, /*grace=*/10, /*now=*/2000};
  RemovalPlan plan = PlanRemovals(&chunks, b);
  // 1000 bytes, capacity 500, low water 475: the five... six oldest go.
  ASSERT_EQ(plan.removals.size(), 6u);
  EXPECT_EQ(plan.removals.front().key, "c0");
  EXPECT_EQ(plan.removals.back().key, "c5");
  EXPECT_EQ(plan.bytes_after, 400u);
  EXPECT_EQ(plan.over_capacity_protected, 0u);
}

TEST(TierPolicy, NeverRemovesWithinGrace) {
  std::vector<TierChunk> chunks;
  for (int i = 0; i < 10; ++i) chunks.push_back({"c" + std::to_string(i), 100, 1995 + i});
  TierBounds b{500, 0, /*grace=*/10, /*now=*/2000};
  RemovalPlan plan = PlanRemovals(&chunks, b);
  EXPECT_TRUE(plan.removals.empty());  // every chunk used within the last 10 s
  EXPECT_EQ(plan.over_capacity_protected, 500u);
}

TEST(TierPolicy, AgeRemovesOnlyOldChunks) {
  std::vector<TierChunk> chunks = {{"old", 10, 100}, {"new", 10, 900}, {"mid", 10, 500}};
  TierBounds b{0, /*max_age=*/450, 10, /*now=*/1000};
  RemovalPlan plan = PlanRemovals(&chunks, b);
  ASSERT_EQ(plan.removals.size(), 2u);
  EXPECT_EQ(plan.removals[0].key, "old");
  EXPECT_EQ(plan.removals[1].key, "mid");
  EXPECT_EQ(plan.removals[0].reason, RemovalReason::kAge);
}

TEST(TierStatus, RoundTrips) {
  TierStatus s;
  s.bytes = 123;
  s.chunks = 4;
  s.capacity = 1000;
  s.holder = "host-1-abc";
  s.time = 1700000000;
  s.removed_age = 7;
  auto back = ParseTierStatus(FormatTierStatus(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->bytes, 123u);
  EXPECT_EQ(back->holder, "host-1-abc");
  EXPECT_EQ(back->time, 1700000000);
  EXPECT_EQ(back->removed_age, 7u);
  EXPECT_FALSE(ParseTierStatus("garbage").ok());
}

TEST(TierKeys, HiddenNamespaceAndEpochs) {
  TierKeys k("p/");
  EXPECT_EQ(k.root(), "p/~kvfs-tier/");
  EXPECT_EQ(k.EpochOf(k.LeaseKey(42)), 42u);
  EXPECT_FALSE(k.EpochOf("p/~kvfs-tier/lease/x").has_value());
  EXPECT_LT(k.LeaseKey(9), k.LeaseKey(10));  // the listing order is the epochs' order
  EXPECT_TRUE(k.IsTierKey(k.status_key()));
  EXPECT_FALSE(k.IsTierKey("p/chunk"));
}

TEST(NodeTier, BoundedPendingSetAndUsage) {
  NodeTier t(/*capacity=*/1000, /*max_pending=*/2);
  int wakes = 0;
  t.SetWake([&] { ++wakes; });
  t.NoteUse("a");
  t.NoteUse("a");
  t.NoteWrite("b", 300);
  EXPECT_EQ(wakes, 1);  // full at two keys: the agent is woken
  t.NoteUse("c");       // dropped, counted
  EXPECT_EQ(t.dropped(), 1u);
  EXPECT_EQ(t.CurrentUsage()->used, 300u);
  EXPECT_EQ(t.TakeUses().size(), 2u);
  t.SetCounted(500);
  EXPECT_EQ(t.CurrentUsage()->used, 500u);
  EXPECT_FALSE(NodeTier(0).CurrentUsage().has_value());
}

TEST(Lease, OneHolderTakeoverAfterSilenceAndRelease) {
  MemoryStore store;
  TierKeys keys("");
  Lease a(&store, keys, "a", /*lease_secs=*/30);
  Lease b(&store, keys, "b", 30);
  auto t0 = Lease::Clock::time_point{} + seconds(1000);
  ASSERT_TRUE(*a.Tick(t0));   // no lease: a creates epoch 1
  ASSERT_FALSE(*b.Tick(t0));  // b watches it
  EXPECT_EQ(b.holder(), "a");
  ASSERT_TRUE(*a.Tick(t0 + seconds(10)));  // renewed: the object changes
  ASSERT_FALSE(*b.Tick(t0 + seconds(20)));
  ASSERT_FALSE(*b.Tick(t0 + seconds(45)));  // unchanged for 25 s: not yet
  // a goes silent; b takes over once it saw nothing change for 30 s.
  ASSERT_TRUE(*b.Tick(t0 + seconds(51)));
  EXPECT_EQ(b.epoch(), 2u);
  // a comes back: it sees the higher epoch and stops.
  EXPECT_FALSE(*a.Tick(t0 + seconds(60)));
  // b unmounts and releases: a takes over at its next step, without waiting.
  b.Release();
  EXPECT_TRUE(*a.Tick(t0 + seconds(61)));
  EXPECT_EQ(a.epoch(), 3u);
}

TEST(Lease, ProbeRefusesAStoreWithoutConditionalCreate) {
  MemoryStore store;
  EXPECT_TRUE(ProbeConditionalCreate(&store, TierKeys(""), "n").ok());
  EXPECT_TRUE(store.Keys().empty());  // the probe cleans up
}

class CollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    opts_.capacity_bytes = 500;
    opts_.interval_secs = 5;  // grace 10 s
    opts_.key_prefix = "p/";
    opts_.node_id = "n1";
    opts_.is_chunk = [](std::string_view k) { return k.find('/', 2) == std::string_view::npos; };
    for (int i = 0; i < 10; ++i) {
      const std::string key = "p/c" + std::to_string(i);
      PutChunk(key, std::string(100, 'x'));
      store_.SetMtime(key, 1000 + i);
    }
    PutChunk("p/dir/", "");  // a marker: neither counted nor removed
  }
  // Through the store's API, as kvfs writes (with its writer mark); PutObject writes as another
  // application does.
  void PutChunk(const std::string& key, const std::string& data) {
    ASSERT_TRUE(store_.Put(key, Body::FromMemory(data.data(), data.size())).ok());
  }
  MemoryStore store_;
  TierOptions opts_;
};

TEST_F(CollectorTest, RecordedUsesProtectOldChunks) {
  TierKeys keys("p/");
  // c0 and c1 were written first but read since (a record of node n2).
  ASSERT_TRUE(WriteSmallObject(&store_, keys.UsesKey("n2", 1), "c0\nc1\n").ok());
  store_.SetMtime(keys.UsesKey("n2", 1), 1500);
  Collector c(&store_, opts_);
  auto pass = c.Pass(/*now=*/2000, /*epoch=*/1, /*dry_run=*/false, [] { return true; });
  ASSERT_TRUE(pass.ok()) << pass.status().ToString();
  EXPECT_EQ(pass->removals.size(), 6u);
  EXPECT_TRUE(store_.GetObject("p/c0").has_value());
  EXPECT_TRUE(store_.GetObject("p/c1").has_value());
  EXPECT_FALSE(store_.GetObject("p/c2").has_value());
  EXPECT_TRUE(store_.GetObject("p/c9").has_value());
  EXPECT_TRUE(store_.GetObject("p/dir/").has_value());
  EXPECT_FALSE(store_.GetObject(keys.UsesKey("n2", 1)).has_value());  // consumed
  auto status = ParseTierStatus(*store_.GetObject(keys.status_key()));
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->bytes, 400u);
  EXPECT_EQ(status->chunks, 4u);
  EXPECT_EQ(status->removed_capacity, 6u);
  // The uses outlive the records: a new collector (a takeover) reads them from the state.
  Collector next(&store_, opts_);
  PutChunk("p/c10", std::string(200, 'y'));
  store_.SetMtime("p/c10", 1200);
  auto again = next.Pass(2001, 2, false, [] { return true; });
  ASSERT_TRUE(again.ok());
  // 600 bytes: c8 (1008) and c9 (1009) go; c0 and c1 (used at 1500, known from the state
  // alone: their record is gone) and c10 (1200) stay.
  ASSERT_EQ(again->removals.size(), 2u);
  EXPECT_EQ(again->removals[0].key, "p/c8");
  EXPECT_EQ(again->removals[1].key, "p/c9");
  EXPECT_TRUE(store_.GetObject("p/c0").has_value());
  EXPECT_TRUE(store_.GetObject("p/c10").has_value());
}

TEST_F(CollectorTest, DryRunChangesNothingAndLostLeaseRemovesNothing) {
  Collector c(&store_, opts_);
  auto dry = c.Pass(2000, 0, /*dry_run=*/true, nullptr);
  ASSERT_TRUE(dry.ok());
  EXPECT_EQ(dry->removals.size(), 6u);
  EXPECT_EQ(store_.Keys().size(), 11u);
  auto lost = c.Pass(2000, 1, false, [] { return false; });
  EXPECT_EQ(lost.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(store_.Keys().size(), 11u);
}

TEST_F(CollectorTest, AgeBound) {
  opts_.capacity_bytes = 0;
  opts_.max_age_secs = 100;
  Collector c(&store_, opts_);
  auto pass = c.Pass(/*now=*/1105, 1, false, [] { return true; });
  ASSERT_TRUE(pass.ok());
  // Last uses 1000..1009; older than 1005 goes: c0..c4.
  EXPECT_EQ(pass->removals.size(), 5u);
  EXPECT_EQ(pass->status.removed_age, 5u);
  // The removed names are written for the other nodes.
  bool batch = false;
  for (const std::string& k : store_.Keys()) batch |= k.starts_with("p/~kvfs-tier/removed/");
  EXPECT_TRUE(batch);
}

TEST_F(CollectorTest, ForeignObjectsAreNeitherCountedNorRemoved) {
  // Other applications' objects under the prefix, older than every chunk (the first candidates),
  // under chunk-like names: no writer mark.
  store_.PutObject("p/notes.txt", std::string(300, 'n'));
  store_.SetMtime("p/notes.txt", 900);
  store_.PutObject("p/backup", std::string(300, 'b'));
  store_.SetMtime("p/backup", 901);
  Collector c(&store_, opts_);
  auto dry = c.Pass(2000, 0, /*dry_run=*/true, nullptr);
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  for (const Removal& r : dry->removals) EXPECT_NE(r.key.find("p/c"), std::string::npos) << r.key;
  EXPECT_EQ(dry->removals.size(), 6u);  // the kvfs chunks alone: 1000 bytes down to 400
  EXPECT_EQ(dry->foreign, 2u);
  EXPECT_EQ(dry->status.bytes, 400u);
  EXPECT_EQ(dry->status.chunks, 4u);
  EXPECT_EQ(store_.Keys().size(), 13u);

  auto pass = c.Pass(2000, 1, false, [] { return true; });
  ASSERT_TRUE(pass.ok()) << pass.status().ToString();
  // Planned again without the foreign objects: the tier reaches its bound with kvfs chunks.
  EXPECT_EQ(pass->removals.size(), 6u);
  EXPECT_EQ(pass->status.bytes, 400u);
  EXPECT_EQ(pass->status.chunks, 4u);
  EXPECT_TRUE(store_.GetObject("p/notes.txt").has_value());
  EXPECT_TRUE(store_.GetObject("p/backup").has_value());
  EXPECT_FALSE(store_.GetObject("p/c0").has_value());
  EXPECT_TRUE(store_.GetObject("p/c9").has_value());

  // Remembered with their ETags: the next pass neither HEADs nor counts them.
  store_.PutObject("p/other", std::string(1000, 'o'));  // a large foreign one: still not counted
  store_.SetMtime("p/other", 950);
  const uint64_t heads = store_.Calls(StoreOp::kHead);
  auto next = c.Pass(2001, 1, false, [] { return true; });
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_TRUE(next->removals.empty());
  EXPECT_EQ(next->status.bytes, 400u);
  EXPECT_EQ(next->foreign, 3u);
  EXPECT_EQ(store_.Calls(StoreOp::kHead) - heads, 1u);  // p/other, once
  EXPECT_TRUE(store_.GetObject("p/other").has_value());
}

TEST_F(CollectorTest, ChunkStoredAgainBeforeTheDeleteIsKept) {
  // Between the collector's check and its DELETE, another node stores p/c0 again (after an
  // engine's remote unlink, say): the If-Match of the DELETE no longer matches.
  store_.BeforeNextDelete("p/c0", [this] { PutChunk("p/c0", std::string(100, 'z')); });
  Collector c(&store_, opts_);
  auto pass = c.Pass(2000, 1, false, [] { return true; });
  ASSERT_TRUE(pass.ok()) << pass.status().ToString();
  ASSERT_TRUE(store_.GetObject("p/c0").has_value());
  EXPECT_EQ(*store_.GetObject("p/c0"), std::string(100, 'z'));
  EXPECT_EQ(pass->changed, 1u);
  for (const Removal& r : pass->removals) EXPECT_NE(r.key, "p/c0");
  EXPECT_EQ(pass->removals.size(), 5u);  // c1..c5; c0 kept and counted
  EXPECT_EQ(pass->status.bytes, 500u);
}

TEST(TierPlacement, RefusedAtABucketRootUnlessAsked) {
  TierOptions o;
  o.capacity_bytes = 1;
  Status st = CheckTierPlacement(o, /*own_store=*/false);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.ToString().find("tier_at_bucket_root"), std::string::npos) << st.ToString();
  EXPECT_TRUE(CheckTierPlacement(o, /*own_store=*/true).ok());  // file://: kvfs's own directory
  o.at_bucket_root = true;
  EXPECT_TRUE(CheckTierPlacement(o, false).ok());
  o.at_bucket_root = false;
  o.key_prefix = "p/";
  EXPECT_TRUE(CheckTierPlacement(o, false).ok());
  o = TierOptions{};  // no tier: nothing to refuse
  EXPECT_TRUE(CheckTierPlacement(o, false).ok());
}

}  // namespace
}  // namespace kvfs
