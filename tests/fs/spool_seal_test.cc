// Crash-safe write-back: a chunk whose close() or rename() returned before its upload is sealed in
// the spool (SpoolSeal) until it is stored; a spool left by a crashed run is uploaded by the next
// mount when its bytes match its seal, and discarded (never published) when they do not or when
// it has no seal. The crash is a copy of the spool directory taken while the uploads are held:
// exactly what a kill -9 of the daemon leaves on the disk.
#include "fs/spool_seal.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/crc32c.h"
#include "base/slice_crcs.h"
#include "objstore/store_wrapper.h"
#include "tests/fs/fs_test_util.h"
#include "tests/src/gate.h"

namespace kvfs {
namespace {

namespace stdfs = std::filesystem;

TEST(SpoolSealTest, ARecordReadsBackAndAnyDamageIsDataLoss) {
  SpoolSeal::Record r{"p/a%2Fb.bin", "dir/a.bin", 1234567, 0xDEADBEEF, true, "user.a=1"};
  const std::string bytes = SpoolSeal::Encode(r);
  auto back = SpoolSeal::Decode(bytes, "seal");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->user_xattrs, "user.a=1");
  EXPECT_EQ(back->key, r.key);
  EXPECT_EQ(back->display, r.display);
  EXPECT_EQ(back->size, r.size);
  EXPECT_EQ(back->crc32c, r.crc32c);
  EXPECT_TRUE(back->replaces);
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] ^= 0x40;
    EXPECT_EQ(SpoolSeal::Decode(bad, "seal").status().code(), StatusCode::kDataLoss) << i;
  }
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_EQ(SpoolSeal::Decode(bytes.substr(0, n), "seal").status().code(), StatusCode::kDataLoss)
        << n;
  }
}

// A seal of a kvfs before attributes (version 1: no attributes field) still reads.
TEST(SpoolSealTest, AVersionOneSealReadsWithoutAttributes) {
  std::string v1 = "KVFSSEAL";
  auto put = [&v1](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) v1.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  put(1, 4);       // version
  put(42, 8);      // size
  put(0x1234, 4);  // crc32c
  put(0, 1);       // replaces
  put(3, 4);
  v1 += "p/k";
  put(1, 4);
  v1 += "k";
  put(Crc32c(0, v1.data(), v1.size()), 4);
  auto back = SpoolSeal::Decode(v1, "seal");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->key, "p/k");
  EXPECT_EQ(back->size, 42u);
  EXPECT_EQ(back->user_xattrs, "");
}

// PUTs wait at a gate until the test opens it.
class HeldPuts : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  void PutAsync(const std::string& key, const Body& body, const PutOptions& opts,
                PutCallback done) override {
    gate.Pass();
    StoreWrapper::PutAsync(key, body, opts, std::move(done));
  }
  Gate gate;
};

class SealedWriteBackTest : public FsTestBase {
 protected:
  void SetUp() override {
    FsTestBase::SetUp();
    spdlog::default_logger();  // made before the upload threads log (see WriteBackTest)
    options_.subdirectories = false;
    options_.write_back = true;
    held_ = std::make_shared<HeldPuts>(mem_);
    held_->gate.Close();
    store_ = held_;
  }
  void TearDown() override {
    held_->gate.Open();
    FsTestBase::TearDown();
    stdfs::remove_all(crashed_);
  }
  size_t Seals(const stdfs::path& dir) const { return SpoolSeal::SealedIn(dir.string()).size(); }
  // What a kill -9 leaves: the spool directory as it is now.
  void Crash() {
    crashed_ = spool_.string() + "-crashed";
    stdfs::remove_all(crashed_);
    stdfs::copy(spool_, crashed_);
  }
  // The next mount over the crashed run's spool, its store answering.
  void MountAgainOverTheCrashedSpool(std::shared_ptr<MemoryStore> store) {
    held_->gate.Open();
    fs_.reset();
    options_.spool_dir = crashed_.string();
    options_.write_back = false;  // recovery does not depend on the setting
    store_ = store;
    Mount();
    fs_->RecoverSealed();
    fs_->DrainWriteBack();
  }
  std::shared_ptr<HeldPuts> held_;
  stdfs::path crashed_;
};

TEST_F(SealedWriteBackTest, AnAcceptedChunkIsSealedUntilItIsStored) {
  Mount();
  ASSERT_TRUE(WriteFile("a.bin", "whole chunk").ok());
  EXPECT_EQ(Seals(spool_), 1u) << "close() returned with nothing on disk to recover";
  held_->gate.Open();
  fs_->DrainWriteBack();
  EXPECT_EQ(Seals(spool_), 0u) << "the seal outlived the upload";
  EXPECT_EQ(mem_->GetObject("p/a.bin"), "whole chunk");
}

TEST_F(SealedWriteBackTest, AnUnlinkedOrRewrittenChunkLosesItsSeal) {
  options_.write_back_uploads = 1;
  Mount();
  ASSERT_TRUE(WriteFile("first.bin", "one").ok());  // holds the only upload thread
  ASSERT_TRUE(WriteFile("second.bin", "two").ok());
  uint64_t fh = CreateForWrite("third.bin");
  WriteAt(fh, 0, "three");
  ASSERT_TRUE(fs_->Flush(fh).ok());
  EXPECT_EQ(Seals(spool_), 3u);
  ASSERT_TRUE(fs_->Unlink(1, "second.bin").ok());
  WriteAt(fh, 5, "!");  // written again after its close: not the version accepted
  EXPECT_EQ(Seals(spool_), 1u);
  Crash();
  held_->gate.Open();  // the release commits what was written since (waiting)
  ASSERT_TRUE(fs_->Release(fh).ok());
  auto fresh = std::make_shared<MemoryStore>();
  MountAgainOverTheCrashedSpool(fresh);
  EXPECT_EQ(fresh->GetObject("p/first.bin"), "one");
  EXPECT_FALSE(fresh->GetObject("p/second.bin")) << "an unlinked chunk came back";
  EXPECT_FALSE(fresh->GetObject("p/third.bin")) << "an unfinished version was published";
}

TEST_F(SealedWriteBackTest, TheNextMountUploadsWhatACrashLeftSealed) {
  Mount();
  ASSERT_TRUE(WriteFile("a.bin", std::string(100000, 'a')).ok());
  // LMCache's and vLLM's habit: a temp file written, closed, renamed into place.
  ASSERT_TRUE(WriteFile("b.bin.tmp", "renamed chunk").ok());
  // vLLM's fs tier with its checksum: an attribute set on the temp file before the rename.
  auto tmp = fs_->Lookup(1, "b.bin.tmp");
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();
  ASSERT_TRUE(fs_->SetXattr(tmp->attr.ino, "user.vllm.kv_crc32c", "1234", {}).ok());
  ASSERT_TRUE(fs_->Rename(1, "b.bin.tmp", 1, "b.bin", 0).ok());
  uint64_t open_fh = CreateForWrite("partial.bin");  // being written when the daemon died
  WriteAt(open_fh, 0, "part of a chunk");
  Crash();
  held_->gate.Open();  // the release commits the part (waiting): this run's own store
  ASSERT_TRUE(fs_->Release(open_fh).ok());
  auto fresh = std::make_shared<MemoryStore>();
  MountAgainOverTheCrashedSpool(fresh);
  EXPECT_EQ(fresh->GetObject("p/a.bin"), std::string(100000, 'a'));
  EXPECT_EQ(fresh->GetObject("p/b.bin"), "renamed chunk");
  // The recovery's check of the seal gave the slices' checksums too: readers verify by slice.
  const std::string a_bytes(100000, 'a');
  EXPECT_EQ(fresh->Head("p/a.bin")->slice_crcs, SliceCrcs::Of(a_bytes.data(), a_bytes.size()));
  EXPECT_EQ(fresh->Head("p/b.bin")->user_xattrs, "user.vllm.kv_crc32c=1234")
      << "the seal lost the chunk's attributes";
  EXPECT_FALSE(fresh->GetObject("p/b.bin.tmp"));
  EXPECT_FALSE(fresh->GetObject("p/partial.bin")) << "an unsealed spool was published";
  WriteBackStats s = fs_->WriteBackStatsNow();
  EXPECT_EQ(s.recovered, 2u);
  EXPECT_EQ(s.uploaded, 2u);
  EXPECT_EQ(s.recovery_refused, 0u);
  EXPECT_TRUE(stdfs::is_empty(crashed_)) << "recovered spool files or seals were left behind";
  auto a = ReadFile("a.bin");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(*a, std::string(100000, 'a'));
}

TEST_F(SealedWriteBackTest, ASpoolWhoseBytesDoNotMatchItsSealIsNeverPublished) {
  Mount();
  ASSERT_TRUE(WriteFile("torn.bin", std::string(5000, 't')).ok());
  ASSERT_TRUE(WriteFile("good.bin", "good").ok());
  Crash();
  // The torn one: its spool lost bytes (a power loss without fdatasync, a damaged disk).
  for (const std::string& spool : SpoolSeal::SealedIn(crashed_.string())) {
    auto rec = SpoolSeal::Read(SpoolSeal::PathOf(spool));
    ASSERT_TRUE(rec.ok()) << rec.status().ToString();
    if (rec->key != "p/torn.bin") continue;
    int fd = open(spool.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(pwrite(fd, "\0", 1, 4000), 1);
    close(fd);
  }
  auto fresh = std::make_shared<MemoryStore>();
  MountAgainOverTheCrashedSpool(fresh);
  EXPECT_FALSE(fresh->GetObject("p/torn.bin")) << "bytes that differ from the sealed chunk";
  EXPECT_EQ(fresh->GetObject("p/good.bin"), "good");
  WriteBackStats s = fs_->WriteBackStatsNow();
  EXPECT_EQ(s.recovered, 1u);
  EXPECT_EQ(s.recovery_refused, 1u);
  EXPECT_TRUE(stdfs::is_empty(crashed_));
}

TEST_F(SealedWriteBackTest, AnObjectAlreadyThereOfTheSameBytesCountsAsStored) {
  Mount();
  ASSERT_TRUE(WriteFile("same.bin", "identical").ok());
  Crash();
  auto fresh = std::make_shared<MemoryStore>();
  fresh->PutObject("p/same.bin", "identical");  // another node stored the same chunk meanwhile
  MountAgainOverTheCrashedSpool(fresh);
  EXPECT_EQ(fresh->GetObject("p/same.bin"), "identical");
  EXPECT_EQ(fs_->WriteBackStatsNow().uploaded, 1u);
  EXPECT_EQ(fs_->WriteBackStatsNow().failed, 0u);
}

TEST_F(SealedWriteBackTest, AMountWithAnotherKeyPrefixLeavesTheChunkSealed) {
  Mount();
  ASSERT_TRUE(WriteFile("x.bin", "for p/").ok());
  Crash();
  options_.key_prefix = "other/";
  auto fresh = std::make_shared<MemoryStore>();
  MountAgainOverTheCrashedSpool(fresh);
  EXPECT_TRUE(fresh->Keys().empty()) << "uploaded under a prefix it was not written to";
  EXPECT_EQ(Seals(crashed_), 1u) << "left for a mount with the prefix it was accepted under";
}

}  // namespace
}  // namespace kvfs
