// A Filesystem over the in-memory store with an injectable clock, plus helpers that replay what
// the kernel sends for common system calls.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "fs/read/direct_reader.h"
#include "fs/errno_map.h"
#include "fs/filesystem.h"
#include "tests/fakes/memory_store.h"

namespace kvfs {

class FsTestBase : public ::testing::Test {
 protected:
  void SetUp() override {
    spool_ = std::filesystem::temp_directory_path() /
             ("kvfs-fs-test-" + std::to_string(getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    options_.key_prefix = "p/";
    options_.spool_dir = spool_.string();
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

}  // namespace kvfs
