// The three kinds of ReadHandle a CachedReader hands out:
//  - CacheHitHandle: a complete cache entry (pinned); reads are preads of its file, and ReadFd
//    gives the file range so the kernel can splice it.
//  - FetchHandle: an object being downloaded (shared ObjectFetch); reads wait for the parts they
//    cover, then read the fill file. If the download failed because the cache disk is full
//    (kNoSpace), reads stream from the store instead: a full cache disk never fails a read.
//  - StreamHandle: no caching; every read is parallel ranged GETs into the caller's buffer,
//    checked by a StreamVerifier when the reads cover the whole object.
// All are thread-safe: their state is immutable after construction, or thread-safe itself.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "cache/chunk_cache.h"
#include "fs/read/chunk_reader.h"
#include "fs/read/fetch_context.h"
#include "fs/read/object_fetch.h"
#include "fs/read/ranged_get.h"
#include "fs/read/stream_verifier.h"

namespace kvfs {

class CacheHitHandle : public ReadHandle {
 public:
  CacheHitHandle(EntryRef entry, ReaderCounters* counters)
      : entry_(std::move(entry)), counters_(counters) {}
  Result<uint64_t> Read(uint64_t offset, uint64_t size, char* buf) override;
  Result<FdRange> ReadFd(uint64_t offset, uint64_t size) override;
  bool Local() const override { return true; }
  bool WouldWait(uint64_t, uint64_t) const override { return false; }
  // Only an entry file that is exactly the object (its trailer in an extended attribute): the
  // kernel reads a backing file to its end.
  int PassthroughFd() override;
  void NotePassthrough() override { counters_->passthrough_opens++; }

 private:
  const EntryRef entry_;
  ReaderCounters* const counters_;
};

class StreamHandle;

class FetchHandle : public ReadHandle {
 public:
  // `disk_full` serves the reads once the download has failed with kNoSpace.
  FetchHandle(std::shared_ptr<ObjectFetch> fetch, std::unique_ptr<StreamHandle> disk_full,
              ReaderCounters* counters);
  ~FetchHandle() override;
  Result<uint64_t> Read(uint64_t offset, uint64_t size, char* buf) override;
  Result<FdRange> ReadFd(uint64_t offset, uint64_t size) override;
  bool Local() const override { return true; }
  bool WouldWait(uint64_t offset, uint64_t size) const override;

 private:
  const std::shared_ptr<ObjectFetch> fetch_;
  const std::unique_ptr<StreamHandle> disk_full_;
  ReaderCounters* const counters_;
};

class StreamHandle : public ReadHandle {
 public:
  // `verify`: check what is read against the object's recorded CRC32C (StreamVerifier).
  StreamHandle(std::shared_ptr<ObjectStore> store, ObjectInfo info, RangedGetOptions opts,
               bool verify, ReaderCounters* counters);
  ~StreamHandle() override;
  Result<uint64_t> Read(uint64_t offset, uint64_t size, char* buf) override;

 private:
  void CountUnverified();  // once per handle

  const std::shared_ptr<ObjectStore> store_;
  const ObjectInfo info_;
  const RangedGetOptions opts_;
  ReaderCounters* const counters_;
  StreamVerifier verifier_;
  std::atomic<bool> served_{false};    // some bytes were handed out
  std::atomic<bool> reported_{false};  // a mismatch was logged and counted
  std::atomic<bool> unverified_counted_{false};
};

}  // namespace kvfs
