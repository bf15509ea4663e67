// ObjectFetch: the one download of one object into a cache fill, shared by every handle that
// opened the object while it runs (single flight).
//
// The object is cut into parts of the pool's buffer size. Up to max_parallel_parts ranged GETs
// run at once (fewer when the shared buffer pool is exhausted), each with If-Match on the ETag
// when it is known. A finished GET is handed to the write threads, which pwrite the part into the
// fill file, checksum it, and mark it done; readers wait only for the parts their range covers,
// and a reader waiting on a part not yet requested moves it to the front of the queue. When all
// parts are in, the per-part CRCs are combined and the fill is committed (no second pass).
//
// Any failed part (after the store's own retries), a short part (object smaller than listed), or
// an object larger than listed (checked by a 1-byte GET past the end when the ETag is unknown)
// fails the whole fetch: readers get the error, the partial fill is dropped, and the owner
// forgets the fetch so that the next Open starts a fresh one. Bytes are never mixed: a part
// either arrives whole from the version named by the ETag or fails.
//
// Thread-safe. Lock order: mu_, then PartBufferPool's lock. No lock is held while calling the
// store, the cache, or the owner.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache/chunk_cache.h"
#include "fs/read/fetch_context.h"
#include "objstore/object_store.h"
#include "src/base/status.h"
#include "src/base/thread_annotations.h"

namespace kvfs {

class ObjectFetch : public BufferWaiter, public std::enable_shared_from_this<ObjectFetch> {
 public:
  ObjectFetch(const FetchContext& ctx, std::string key, ObjectInfo info);
  ~ObjectFetch() override;

  const std::string& key() const { return key_; }
  // Same object version: same size, and same ETag when both are known.
  bool Matches(const ObjectInfo& info) const;

  // The opener that created the fetch: starts downloading into `fill`.
  void Start(FillRef fill) EXCLUDES(mu_);
  // The opener that created the fetch could not start it (no fill): waiters get `st`.
  void Abandon(Status st) EXCLUDES(mu_);
  // Blocks until Start or Abandon; the Abandon status, else OK (later failures surface in WaitFor).
  Status WaitStarted() EXCLUDES(mu_);
  // Blocks until [offset, offset+length) has been written to fd() (clipped to the object), or the
  // fetch has failed (its error).
  Status WaitFor(uint64_t offset, uint64_t length) EXCLUDES(mu_);
  // The fill file, readable with pread; valid from Start until the fetch is destroyed.
  int fd() const { return fd_; }
  uint64_t size() const { return info_.size; }

  void OnBufferAvailable() override { Pump(); }

 private:
  enum class State { kStarting, kRunning, kComplete, kFailed, kAbandoned };
  enum class PartState : uint8_t { kPending, kInFlight, kDone };
  static constexpr size_t kNone = static_cast<size_t>(-1);

  uint64_t PartOffset(size_t p) const { return p * part_size_; }
  uint64_t PartLength(size_t p) const;
  // Issues GETs while parallelism and buffers allow.
  void Pump() EXCLUDES(mu_);
  size_t NextPartLocked() REQUIRES(mu_);
  // On a write thread: check, write and checksum one finished GET (part == nparts_: the probe).
  void OnPartDone(size_t part, char* buf, Result<uint64_t> got) EXCLUDES(mu_);
  Status CheckAndWrite(size_t part, const char* buf, const Result<uint64_t>& got, uint32_t* crc);
  bool DrainedLocked() REQUIRES(mu_);
  // On a write thread, after the last part: commit the fill.
  void Finish() EXCLUDES(mu_);

  const FetchContext ctx_;
  const std::string key_;
  const ObjectInfo info_;
  const uint64_t part_size_;
  const size_t nparts_;
  const bool probe_;  // ETag unknown: also check that nothing lies past info_.size
  int fd_ = -1;       // our own dup of the fill's fd: stays valid when the fill is dropped
  char probe_byte_[1] = {0};

  mutable std::mutex mu_;
  std::condition_variable cv_;
  State state_ GUARDED_BY(mu_) = State::kStarting;
  Status error_ GUARDED_BY(mu_);
  std::vector<PartState> parts_ GUARDED_BY(mu_);
  std::vector<uint32_t> part_crc_ GUARDED_BY(mu_);
  std::deque<size_t> urgent_ GUARDED_BY(mu_);  // parts a reader waits for
  size_t next_ GUARDED_BY(mu_) = 0;            // in-order scan position
  size_t done_ GUARDED_BY(mu_) = 0;
  int inflight_ GUARDED_BY(mu_) = 0;
  bool probe_issued_ GUARDED_BY(mu_) = false;
  bool probe_done_ GUARDED_BY(mu_) = false;
  bool fill_dropped_ GUARDED_BY(mu_) = false;  // after a failure
  bool drained_ GUARDED_BY(mu_) = false;       // reported to the owner
  FillRef fill_ GUARDED_BY(mu_);
  EntryRef entry_ GUARDED_BY(mu_);  // after commit: pins the entry while handles read it
};

}  // namespace kvfs
