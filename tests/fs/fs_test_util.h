// A Filesystem over the in-memory store with an injectable clock, plus helpers that replay what
// the kernel sends for common system calls.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "cache/chunk_cache.h"
#include "fs/errno_map.h"
#include "fs/filesystem.h"
#include "fs/read/cached_reader.h"
#include "fs/read/direct_reader.h"
#include "tests/fakes/memory_store.h"

namespace kvfs {

// readdir of a whole directory as getdents does it: from offset 0, `per_call` entries per call,
// each call going on at the offset the last entry gave.
inline Result<std::vector<DirEntry>> ReadAllDir(Filesystem& fs, uint64_t fh,
                                                size_t per_call = 100) {
  std::vector<DirEntry> all;
  uint64_t off = 0;
  for (;;) {
    size_t n = 0;
    KVFS_RETURN_IF_ERROR(fs.ReadDir(fh, off, [&](const DirEntry& e, uint64_t next) {
      if (n == per_call) return false;
      all.push_back(e);
      off = next;
      ++n;
      return true;
    }));
    if (n == 0) return all;
  }
}

class FsTestBase : public ::testing::Test {
 protected:
  void SetUp() override {
    spool_ = std::filesystem::temp_directory_path() /
             ("kvfs-fs-test-" + std::to_string(getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    options_.key_prefix = "p/";
    options_.spool_dir = spool_.string();
    // The write path's tests check what a close stores, so their close is the upload itself;
    // WriteBackTest and SpoolSealTest turn the default (write-back) back on.
    options_.write_back = false;
    mem_ = std::make_shared<MemoryStore>();
    store_ = mem_;
  }
  void TearDown() override {
    fs_.reset();
    std::filesystem::remove_all(spool_);
  }

  // Builds the filesystem (after a test adjusted options_ or store_).
  void Mount() {
    auto fs =
        Filesystem::Create(store_, NewDirectReader(store_), options_, [this] { return now_; });
    ASSERT_TRUE(fs.ok()) << fs.status().ToString();
    fs_ = std::move(fs).value();
  }

  // creat(O_WRONLY|O_TRUNC) of `name` in the root: its handle (0 on failure, reported).
  uint64_t CreateForWrite(const std::string& name) {
    auto cr = fs_->CreateFile(1, name, O_CREAT | O_WRONLY | O_TRUNC);
    EXPECT_TRUE(cr.ok()) << cr.status().ToString();
    return cr.ok() ? cr->second.fh : 0;
  }
  void WriteAt(uint64_t fh, uint64_t off, const std::string& data) {
    auto w = fs_->Write(fh, off, data.data(), data.size());
    ASSERT_TRUE(w.ok()) << w.status().ToString();
  }
  // close(): flush, then release; the first error.
  Status CloseHandle(uint64_t fh) {
    Status st = fs_->Flush(fh);
    Status rel = fs_->Release(fh);
    return st.ok() ? rel : st;
  }

  // open(O_CREAT|O_WRONLY|O_TRUNC) + write + close. Returns the close (flush) status.
  Status WriteFile(const std::string& name, const std::string& data, uint64_t parent = 1) {
    auto cr = fs_->CreateFile(parent, name, O_CREAT | O_WRONLY | O_TRUNC);
    if (!cr.ok()) return cr.status();
    uint64_t fh = cr->second.fh;
    auto w = fs_->Write(fh, 0, data.data(), data.size());
    Status st = w.ok() ? fs_->Flush(fh) : w.status();
    Status rel = fs_->Release(fh);
    return st.ok() ? rel : st;
  }

  // lookup + open(O_RDONLY) + read of the whole file + close.
  Result<std::string> ReadFile(const std::string& name, uint64_t parent = 1) {
    KVFS_ASSIGN_OR_RETURN(FsEntry e, fs_->Lookup(parent, name));
    KVFS_ASSIGN_OR_RETURN(OpenResult o, fs_->Open(e.attr.ino, O_RDONLY));
    std::string buf(e.attr.size + 16, '\0');
    auto n = fs_->Read(o.fh, 0, buf.size(), buf.data());
    fs_->Release(o.fh);
    if (!n.ok()) return n.status();
    buf.resize(*n);
    return buf;
  }

  std::filesystem::path spool_;
  FsOptions options_;
  std::shared_ptr<MemoryStore> mem_;
  std::shared_ptr<ObjectStore> store_;
  std::unique_ptr<Filesystem> fs_;
  std::chrono::steady_clock::time_point now_ =
      std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
};

// FsTestBase with the chunk cache in front of the store (MountCached), as the daemon runs.
class CachedFsTestBase : public FsTestBase {
 protected:
  void TearDown() override {
    // Handles and the reader go before the cache they pin.
    fs_.reset();
    cache_.reset();
    std::filesystem::remove_all(cache_dir_);
    FsTestBase::TearDown();
  }

  void MountCached(uint64_t capacity = 64 << 20) {
    cache_dir_ = spool_.string() + "-cache";
    ChunkCacheOptions co;
    co.dir = cache_dir_;
    co.capacity = capacity;
    auto cache = ChunkCache::Open(co);
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    cache_ = std::move(cache).value();
    auto reader = std::make_shared<CachedReader>(store_, cache_.get(), reader_options_);
    reader_ = reader.get();
    auto fs = Filesystem::Create(store_, reader, options_, [this] { return now_; });
    ASSERT_TRUE(fs.ok()) << fs.status().ToString();
    fs_ = std::move(fs).value();
  }

  std::string cache_dir_;
  std::unique_ptr<ChunkCache> cache_;
  CachedReaderOptions reader_options_ = SmallParts();  // MountCached's
  CachedReader* reader_ = nullptr;                     // owned by fs_

 private:
  static CachedReaderOptions SmallParts() {
    CachedReaderOptions o;
    o.part_size = 64 << 10;
    return o;
  }
};

}  // namespace kvfs
