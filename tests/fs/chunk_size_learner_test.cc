// learn_chunk_sizes: name patterns, the largest-size rule, and the whole-chunk check at close
// with sizes learnt from lookups, listings, readdir and the mount's own uploads.
#include "fs/chunk_size_learner.h"

#include "tests/fakes/fault_store.h"
#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

TEST(ChunkSizeLearnerPatternTest, EnginesNamesKeepModelRankAndDtype) {
  // LMCache local_disk: <model>@<world>@<worker>@<hash hex>@<dtype>.pt
  EXPECT_EQ(
      ChunkSizeLearner::PatternOf("p/meta-llama-Llama-3.1-8B@1@0@1a2b3c4d5e6f7081@bfloat16.pt"),
      "p/meta-llama-Llama-3.1-8B@1@0@*@bfloat16.pt");
  // LMCache MP fs: the rank (0x%08x) is 8 hex digits and stays.
  EXPECT_EQ(ChunkSizeLearner::PatternOf("m-SEP-q@0x00000003@0@00ab12cd34ef5678.data"),
            "m-SEP-q@0x00000003@0@*.data");
  // llm-d: fan-out directories <hhh>/<hh> above <hash>.bin.
  EXPECT_EQ(ChunkSizeLearner::PatternOf("r/m/tp_1_pp_size_1/rank_0/bf16/a1b/2c/"
                                        "a1b2c3d4e5f60718.bin"),
            "r/m/tp_1_pp_size_1/rank_0/bf16/*/*/*.bin");
  // LMCache GDS: decimal hash, decimal fan-out; data and metadata files are different patterns.
  EXPECT_EQ(
      ChunkSizeLearner::PatternOf("12/34/m%401%400%40-1234567890123456789.kvcache.safetensors"),
      "*/*/m%401%400%40-*.kvcache.safetensors");
  // SGLang HiCacheFile: <sha256>_<suffix>.bin
  EXPECT_EQ(ChunkSizeLearner::PatternOf(std::string(64, 'e') + "_k.bin"), "*_k.bin");
  // A short hex directory that is not a piece of the file name is not fan-out.
  EXPECT_EQ(ChunkSizeLearner::PatternOf("m/bf16/a1b/a1b2c3d4e5f60718.bin"), "m/bf16/*/*.bin");
  // Short hex runs in the last component are not hashes.
  EXPECT_EQ(ChunkSizeLearner::PatternOf("abc"), "abc");
}

TEST(ChunkSizeLearnerPatternTest, LiteralPrefixStopsAtTheHash) {
  EXPECT_EQ(ChunkSizeLearner::LiteralPrefix("p/m@1@0@1a2b3c4d5e6f7081@bfloat16.pt"), "p/m@1@0@");
  EXPECT_EQ(ChunkSizeLearner::LiteralPrefix("r/m/rank_0/bf16/a1b/2c/a1b2c3d4e5f60718.bin"),
            "r/m/rank_0/bf16/");
  EXPECT_EQ(ChunkSizeLearner::LiteralPrefix("p/no-hash-here"), "p/no-hash-here");
}

TEST(ChunkSizeLearnerTest, LargestSizeWinsAndPatternsAreSeparate) {
  ChunkSizeLearner l(true);
  EXPECT_FALSE(l.Lookup("m@1@0@0123456789abcdef@bf16.pt"));
  l.Observe("m@1@0@0123456789abcdef@bf16.pt", 8);
  l.Observe("m@1@0@1123456789abcdef@bf16.pt", 16);
  l.Observe("m@1@0@2123456789abcdef@bf16.pt", 4);  // a partial object cannot lower it
  auto got = l.Lookup("m@1@0@ffffffffffffffff@bf16.pt");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->size, 16u);
  EXPECT_EQ(got->from_key, "m@1@0@1123456789abcdef@bf16.pt");
  EXPECT_FALSE(l.Lookup("m@1@1@ffffffffffffffff@bf16.pt"));  // another worker
  EXPECT_FALSE(l.Lookup("m@1@0@ffffffffffffffff@fp8.pt"));   // another dtype
}

TEST(ChunkSizeLearnerTest, DisabledLearnsNothingAndPatternsAreBounded) {
  ChunkSizeLearner off(false);
  off.Observe("m@0123456789abcdef", 8);
  EXPECT_FALSE(off.Lookup("m@0123456789abcdef"));
  ChunkSizeLearner small(true, 2);
  small.Observe("a@0123456789abcdef", 1);
  small.Observe("b@0123456789abcdef", 2);
  small.Observe("c@0123456789abcdef", 3);
  int known = 0;
  for (const char* k : {"a@0123456789abcdef", "b@0123456789abcdef", "c@0123456789abcdef"}) {
    known += small.Lookup(k) ? 1 : 0;
  }
  EXPECT_EQ(known, 2);
  EXPECT_TRUE(small.Lookup("c@0123456789abcdef"));  // the newest is kept
}

class LearnChunkSizesTest : public FsTestBase {
 protected:
  void SetUp() override {
    FsTestBase::SetUp();
    options_.learn_chunk_sizes = true;
  }
  static std::string Name(char hash_digit, const std::string& dtype = "bfloat16") {
    return "m@1@0@" + std::string(16, hash_digit) + "@" + dtype + ".pt";
  }
};

TEST_F(LearnChunkSizesTest, SizeFromALookedUpObjectRejectsAShorterChunk) {
  Mount();
  mem_->PutObject("p/" + Name('a'), std::string(16, 'A'));
  ASSERT_TRUE(fs_->Lookup(1, Name('a')).ok());  // the engine's exists(): HEAD
  Status st = WriteFile(Name('b'), std::string(8, 'B'));
  EXPECT_EQ(ToErrno(st), EINVAL) << st.ToString();
  EXPECT_NE(st.message().find(Name('b')), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("16-byte chunks"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("learn_chunk_sizes"), std::string::npos) << st.message();
  EXPECT_FALSE(mem_->GetObject("p/" + Name('b')).has_value());
  EXPECT_EQ(fs_->Lookup(1, Name('b')).status().code(), StatusCode::kNotFound);
  // The whole chunk of that name goes through afterwards.
  EXPECT_TRUE(WriteFile(Name('b'), std::string(16, 'B')).ok());
  EXPECT_EQ(mem_->GetObject("p/" + Name('b')), std::string(16, 'B'));
}

TEST_F(LearnChunkSizesTest, AFreshNodeAsksTheStoreOncePerPattern) {
  mem_->PutObject("p/" + Name('a'), std::string(16, 'A'));  // written by another node
  Mount();
  EXPECT_EQ(ToErrno(WriteFile(Name('b'), std::string(8, 'B'))), EINVAL);
  EXPECT_EQ(mem_->Calls(StoreOp::kList), 1u);
  EXPECT_TRUE(WriteFile(Name('c'), std::string(16, 'C')).ok());
  EXPECT_EQ(ToErrno(WriteFile(Name('d'), std::string(8, 'D'))), EINVAL);
  EXPECT_TRUE(WriteFile(Name('e', "fp8"), std::string(8, 'E')).ok());  // nothing of it stored
  EXPECT_TRUE(WriteFile(Name('f', "fp8"), std::string(8, 'F')).ok());
  EXPECT_EQ(mem_->Calls(StoreOp::kList), 2u);  // one per pattern
}

TEST_F(LearnChunkSizesTest, OwnUploadsTeachAndOnlyTheSamePatternIsChecked) {
  Mount();
  ASSERT_TRUE(WriteFile(Name('a'), std::string(8, 'A')).ok());   // nothing known yet: accepted
  ASSERT_TRUE(WriteFile(Name('b'), std::string(16, 'B')).ok());  // larger: accepted, learnt
  EXPECT_EQ(ToErrno(WriteFile(Name('c'), std::string(8, 'C'))), EINVAL);
  EXPECT_TRUE(WriteFile(Name('c', "fp8"), std::string(8, 'C')).ok());  // another pattern
  EXPECT_TRUE(WriteFile(Name('d'), std::string(24, 'D')).ok());        // larger is never partial
}

// The engine's chunk_size shrank (a config change). The old, larger objects stay in the store; new
// chunks all have the new size, which is taken once kEstablish names had it.
TEST_F(LearnChunkSizesTest, AShrunkChunkSizeIsAcceptedOnceSeveralNamesHaveIt) {
  Mount();
  ASSERT_TRUE(WriteFile(Name('a'), std::string(16, 'A')).ok());
  // A partial chunk closed again and again under one name stays partial.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(ToErrno(WriteFile(Name('1'), std::string(4, 'P'))), EINVAL);
  EXPECT_EQ(ToErrno(WriteFile(Name('b'), std::string(8, 'B'))), EINVAL);
  EXPECT_EQ(ToErrno(WriteFile(Name('c'), std::string(8, 'C'))), EINVAL);
  EXPECT_TRUE(WriteFile(Name('d'), std::string(8, 'D')).ok());  // third name: the new size
  EXPECT_TRUE(WriteFile(Name('b'), std::string(8, 'B')).ok());  // its retry goes through
  EXPECT_TRUE(WriteFile(Name('e'), std::string(8, 'E')).ok());
  EXPECT_EQ(mem_->GetObject("p/" + Name('e')), std::string(8, 'E'));
  EXPECT_EQ(ToErrno(WriteFile(Name('f'), std::string(4, 'F'))), EINVAL);  // still partial
  EXPECT_TRUE(WriteFile(Name('0'), std::string(16, 'G')).ok());  // the old size still whole
}

TEST_F(LearnChunkSizesTest, ANewSizeOtherNodesStoredIsAcceptedAtOnce) {
  mem_->PutObject("p/" + Name('a'), std::string(16, 'A'));
  for (char c : std::string("789")) mem_->PutObject("p/" + Name(c), std::string(8, c));
  Mount();
  EXPECT_TRUE(WriteFile(Name('b'), std::string(8, 'B')).ok());
  EXPECT_EQ(ToErrno(WriteFile(Name('c'), std::string(12, 'C'))), EINVAL);
}

TEST_F(LearnChunkSizesTest, SizeFromTheMissListingOfTheDirectory) {
  Mount();
  mem_->PutObject("p/" + Name('a'), std::string(16, 'A'));
  // exists() of names that are not there: after a few misses the directory is listed once.
  for (char c : std::string("0123456789")) {
    EXPECT_EQ(fs_->Lookup(1, Name(c)).status().code(), StatusCode::kNotFound);
  }
  EXPECT_EQ(ToErrno(WriteFile(Name('b'), std::string(8, 'B'))), EINVAL);
}

TEST_F(LearnChunkSizesTest, SizeFromReaddir) {
  Mount();
  mem_->PutObject("p/" + Name('a'), std::string(16, 'A'));
  auto dh = fs_->OpenDir(1);
  ASSERT_TRUE(dh.ok()) << dh.status().ToString();
  ASSERT_TRUE(ReadAllDir(*fs_, *dh).ok());
  fs_->ReleaseDir(*dh);
  EXPECT_EQ(ToErrno(WriteFile(Name('b'), std::string(8, 'B'))), EINVAL);
}

TEST_F(LearnChunkSizesTest, RenameOfAShortTempFileOntoAChunkNameIsRejected) {
  Mount();
  ASSERT_TRUE(WriteFile(Name('a'), std::string(16, 'A')).ok());
  ASSERT_TRUE(WriteFile(Name('b') + ".tmp", std::string(8, 'B')).ok());  // temp: stays local
  Status st = fs_->Rename(1, Name('b') + ".tmp", 1, Name('b'), 0);
  EXPECT_EQ(ToErrno(st), EINVAL) << st.ToString();
  EXPECT_FALSE(mem_->GetObject("p/" + Name('b')).has_value());
}

TEST_F(LearnChunkSizesTest, AFailedListingLeavesTheCloseUnchecked) {
  mem_->PutObject("p/" + Name('a'), std::string(16, 'A'));
  auto faults = std::make_shared<FaultStore>(mem_);
  faults->InjectError(FaultStore::Op::kList, {Status::Unavailable("injected")});
  store_ = faults;
  Mount();
  // Nothing known: the chunk is not size-checked (the failure is logged), not refused.
  EXPECT_TRUE(WriteFile(Name('b'), std::string(8, 'B')).ok());
  EXPECT_EQ(faults->Calls(FaultStore::Op::kList), 1u);
  // Its own upload taught the pattern's size from then on.
  EXPECT_EQ(ToErrno(WriteFile(Name('c'), std::string(4, 'C'))), EINVAL);
}

TEST(ChunkSizeLearnerTest, AFailedListingIsAskedAgain) {
  auto mem = std::make_shared<MemoryStore>();
  mem->PutObject("m@0123456789abcdef@x", std::string(16, 'A'));
  auto faults = std::make_shared<FaultStore>(mem);
  faults->InjectError(FaultStore::Op::kList, {Status::Unavailable("injected")});
  ChunkSizeLearner l(true);
  EXPECT_FALSE(l.Lookup("m@1123456789abcdef@x", faults.get()));
  auto got = l.Lookup("m@1123456789abcdef@x", faults.get());
  ASSERT_TRUE(got);
  EXPECT_EQ(got->size, 16u);
  EXPECT_TRUE(l.Lookup("m@2123456789abcdef@x", faults.get()));
  EXPECT_EQ(faults->Calls(FaultStore::Op::kList), 2u);  // known now: no third request
}

TEST_F(LearnChunkSizesTest, NamesWithoutAHashAreNotCheckedAndCostNoRequest) {
  Mount();
  ASSERT_TRUE(WriteFile("chunk-0001.bin", std::string(16, 'A')).ok());
  EXPECT_TRUE(WriteFile("chunk-0002.bin", std::string(8, 'B')).ok());
  EXPECT_EQ(mem_->Calls(StoreOp::kList), 0u);
}

TEST_F(LearnChunkSizesTest, OffByDefaultAndExplicitChunkSizesWin) {
  options_.learn_chunk_sizes = false;
  Mount();
  ASSERT_TRUE(WriteFile(Name('a'), std::string(16, 'A')).ok());
  EXPECT_TRUE(WriteFile(Name('b'), std::string(8, 'B')).ok());
  fs_.reset();
  options_.learn_chunk_sizes = true;
  options_.chunk_sizes = {8, 16};
  Mount();
  ASSERT_TRUE(WriteFile(Name('c'), std::string(16, 'C')).ok());
  EXPECT_TRUE(WriteFile(Name('d'), std::string(8, 'D')).ok());
}

}  // namespace
}  // namespace kvfs
