// Lookups of chunks in deep trees from a node that has not seen their directories: one store
// request per chunk however deep, counted on the in-memory store, and the answers stay right
// (missing directories ENOENT, empty mkdir'd directories exist, files beside directories, siblings
// that extend a name).
#include <cstdio>

#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

class DeepLookupTest : public FsTestBase {
 protected:
  // vLLM's fs tier / llm-d 0.22: <root>/<model>_r0/<hhh>/<hh>_g0/<hash>.bin, one <hhh> per chunk.
  static std::vector<std::string> ChunkPath(int i) {
    char h[8];
    snprintf(h, sizeof(h), "%03x%02x", i % 4096, (i * 7) % 256);
    const std::string hs(h);
    return {"kv", "model_0123456789ab_r0", hs.substr(0, 3), hs.substr(3, 2) + "_g0",
            hs + std::to_string(i) + ".bin"};
  }
  static std::string KeyOf(const std::vector<std::string>& path) {
    std::string k = "p";
    for (const auto& c : path) k += "/" + c;
    return k;
  }
  // The kernel's walk: one lookup per component.
  Result<FsEntry> LookupPath(const std::vector<std::string>& path) {
    uint64_t parent = 1;
    FsEntry e;
    for (const auto& c : path) {
      KVFS_ASSIGN_OR_RETURN(e, fs_->Lookup(parent, c));
      parent = e.attr.ino;
    }
    return e;
  }
  uint64_t Requests() {
    return mem_->Calls(StoreOp::kHead) + mem_->Calls(StoreOp::kGet) +
           mem_->Calls(StoreOp::kList) + mem_->Calls(StoreOp::kPut) +
           mem_->Calls(StoreOp::kDelete) + mem_->Calls(StoreOp::kCopy);
  }
};

// A listing page smaller than the tree, so that each chunk's own levels must be asked for.
TEST_F(DeepLookupTest, ExistingChunkCostsOneRequestWhateverItsDepth) {
  options_.lookup_list_max_keys = 4;
  Mount();
  constexpr int kChunks = 64;
  for (int i = 0; i < kChunks; ++i) mem_->PutObject(KeyOf(ChunkPath(i)), "chunk");
  const uint64_t before = Requests();
  for (int i = 0; i < kChunks; ++i) {
    auto e = LookupPath(ChunkPath(i));
    ASSERT_TRUE(e.ok()) << i << ": " << e.status().ToString();
    EXPECT_EQ(e->attr.size, 5u);
    EXPECT_FALSE(e->attr.is_dir);
  }
  // Before: a HEAD and a one-key LIST per unseen directory and a HEAD per chunk (~5 each).
  // The root's "kv" and the model directory are looked up once for all chunks.
  EXPECT_LE(Requests() - before, kChunks + 2u);
  EXPECT_EQ(mem_->Calls(StoreOp::kHead), 0u);
  const std::vector<std::string> seven = ChunkPath(7);
  auto dir = LookupPath({seven.begin(), seven.end() - 1});
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(*ReadFile(seven.back(), dir->attr.ino), "chunk");
}

TEST_F(DeepLookupTest, MissingChunkInNeverSeenDirectoriesCostsOneRequest) {
  options_.lookup_list_max_keys = 4;
  Mount();
  for (int i = 0; i < 16; ++i) mem_->PutObject(KeyOf(ChunkPath(i)), "chunk");
  ASSERT_TRUE(LookupPath(ChunkPath(0)).ok());
  const uint64_t before = Requests();
  constexpr int kMisses = 32;
  for (int i = 1000; i < 1000 + kMisses; ++i) {
    EXPECT_EQ(LookupPath(ChunkPath(i)).status().code(), StatusCode::kNotFound) << i;
  }
  EXPECT_LE(Requests() - before, uint64_t{kMisses});
}

TEST_F(DeepLookupTest, ASmallTreeIsAnsweredFromTheFirstListing) {
  Mount();
  for (int i = 0; i < 32; ++i) mem_->PutObject(KeyOf(ChunkPath(i)), "chunk");
  const uint64_t before = Requests();
  for (int i = 0; i < 32; ++i) ASSERT_TRUE(LookupPath(ChunkPath(i)).ok()) << i;
  // Misses in the listed tree, at any level, are answered from that listing too.
  for (int i = 2000; i < 2032; ++i) {
    EXPECT_EQ(LookupPath(ChunkPath(i)).status().code(), StatusCode::kNotFound) << i;
  }
  EXPECT_EQ(Requests() - before, 1u);
}

TEST_F(DeepLookupTest, DirectoriesFilesAndSiblingsAreToldApart) {
  options_.lookup_list_max_keys = 4;
  Mount();
  mem_->PutObject("p/empty/", "");  // mkdir's marker on another node
  mem_->PutObject("p/f", "file");   // a file whose name begins other names
  mem_->PutObject("p/f-old/x", "x");
  mem_->PutObject("p/f.1", "y");
  for (int i = 0; i < 8; ++i) mem_->PutObject("p/d-" + std::to_string(i), "s");  // '-' < '/'
  mem_->PutObject("p/d/x", "in d");

  auto empty = fs_->Lookup(1, "empty");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->attr.is_dir);
  auto dh = fs_->OpenDir(empty->attr.ino);
  ASSERT_TRUE(dh.ok());
  EXPECT_EQ(ReadAllDir(*fs_, *dh)->size(), 2u);  // "." and ".."
  fs_->ReleaseDir(*dh);

  auto f = fs_->Lookup(1, "f");
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->attr.is_dir);
  EXPECT_EQ(f->attr.size, 4u);
  auto fold = fs_->Lookup(1, "f-old");
  ASSERT_TRUE(fold.ok());
  EXPECT_TRUE(fold->attr.is_dir);

  // The page of "p/d" ends among the siblings "p/d-N" before reaching "p/d/".
  auto d = fs_->Lookup(1, "d");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->attr.is_dir);
  EXPECT_EQ(*ReadFile("x", d->attr.ino), "in d");

  EXPECT_EQ(fs_->Lookup(1, "nodir").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_->Lookup(empty->attr.ino, "nothing").status().code(), StatusCode::kNotFound);
  auto e = fs_->Lookup(1, "e");  // "p/e" is a prefix of "p/empty/" only: missing
  EXPECT_EQ(e.status().code(), StatusCode::kNotFound);
}

// A listing answers misses for one TTL; what this node writes shows at once, what another node
// writes within the TTL.
TEST_F(DeepLookupTest, NewChunksShowAfterAListing) {
  Mount();
  for (int i = 0; i < 4; ++i) mem_->PutObject(KeyOf(ChunkPath(i)), "chunk");
  const std::vector<std::string> zero = ChunkPath(0);
  ASSERT_TRUE(LookupPath(zero).ok());
  auto dir = LookupPath({zero.begin(), zero.end() - 1});
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(WriteFile("mine.bin", "abc", dir->attr.ino).ok());
  EXPECT_TRUE(fs_->Lookup(dir->attr.ino, "mine.bin").ok());

  mem_->PutObject(KeyOf(ChunkPath(0)) + ".other", "other node");
  now_ += std::chrono::seconds(options_.metadata_ttl_secs + 1);
  EXPECT_TRUE(fs_->Lookup(dir->attr.ino, ChunkPath(0).back() + ".other").ok());
  EXPECT_TRUE(fs_->Lookup(dir->attr.ino, "mine.bin").ok());
}

}  // namespace
}  // namespace kvfs
