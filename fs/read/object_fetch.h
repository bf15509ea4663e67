// ObjectFetch: the one download of one object into a cache fill, shared by every handle that
// opened the object while it runs (single flight).
//
// The object is cut into parts of ctx.part_size. Up to max_parallel_parts ranged GETs run at
// once, each with If-Match on the ETag when it is known. Each GET streams: its bytes are written
// into the fill file at their offset and checksummed as they arrive, while they are still in the
// CPU cache, on the store's I/O thread (GetStreamAsync). No part is held in memory, and a reader
// waits only for the bytes its range covers - not for whole parts - so the reply to the engine
// overlaps the download. A reader waiting on a part not yet requested moves it to the front of
// the queue. When all parts are in, the per-part CRCs are combined and the fill is committed (no
// second pass over the bytes).
//
// Verification (ctx.verify, `verify: auto`): when the object carries a CRC32C recorded by its
// writer (ObjectInfo::crc32c from HEAD, or from the first GET's reply for objects known from a
// LIST), a byte changed on the wire or at rest fails the fetch with kDataLoss (EIO) and is never
// served or cached. When the writer also recorded the CRC of each slice (ObjectInfo::slice_crcs:
// kvfs's single-PUT chunks) and the parts are whole slices, each slice is checked as its last byte
// arrives and readers get it then: the reply overlaps the download, and a damaged slice fails the
// fetch before any of its bytes is served (the slices before it were the object's bytes). With
// the whole object's CRC only, readers get no byte until all parts are in and their combined CRC
// matched. Objects without a checksum stream as they arrive, counted as unverified.
//
// Any failed part (after the store's own retries and resumes), a short part (object smaller than
// listed), or an object larger than listed (checked by a 1-byte GET past the end when the ETag is
// unknown) fails the whole fetch: readers get the error, the partial fill is dropped, and the
// owner forgets the fetch so that the next Open starts a fresh one. Bytes are never mixed: every
// byte written comes from the version named by the ETag (resumed GETs keep If-Match), and bytes a
// reader saw before a failure were the object's bytes.
//
// Thread-safe. mu_ is a leaf lock. No lock is held while calling the store, the cache, or the
// owner. Lock order with the store: the store's sink and done callbacks take mu_ briefly.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_annotations.h"
#include "cache/chunk_cache.h"
#include "fs/read/fetch_context.h"
#include "objstore/object_store.h"

namespace kvfs {

class ObjectFetch : public std::enable_shared_from_this<ObjectFetch> {
 public:
  ObjectFetch(const FetchContext& ctx, std::string key, ObjectInfo info);
  ~ObjectFetch();

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
  // Whether reading [offset, offset+length) would wait on the store now: false once those bytes
  // are written, or the fetch failed (WaitFor returns the error at once) - except with kNoSpace,
  // whose readers stream from the store instead. Never blocks.
  bool WouldWait(uint64_t offset, uint64_t length) const EXCLUDES(mu_);
  // The fill file, readable with pread; valid from Start until the fetch is destroyed.
  int fd() const { return fd_; }
  // Whether the download completed and is in the cache (final once it told its owner it
  // finished).
  bool Stored() const EXCLUDES(mu_);
  uint64_t size() const { return info_.size; }

 private:
  enum class State { kStarting, kRunning, kComplete, kFailed, kAbandoned };
  enum class PartState : uint8_t { kPending, kInFlight, kDone };
  static constexpr size_t kNone = static_cast<size_t>(-1);
  static constexpr uint64_t kNoWaiter = UINT64_MAX;
  // What one GET has delivered so far. Touched only by that GET's sink and done callbacks,
  // which the store runs one after another.
  struct PartProgress {
    uint64_t received = 0;
    uint32_t crc = 0;
    bool mode_known = false;  // slice_size was read (at the part's first bytes)
    uint64_t slice_size = 0;  // checked slice by slice (0: not)
    uint32_t slice_crc = 0;   // of the bytes received of the slice in progress
  };

  uint64_t PartOffset(size_t p) const { return p * part_size_; }
  uint64_t PartLength(size_t p) const;
  // Issues GETs while parallelism allows.
  void Pump() EXCLUDES(mu_);
  size_t NextPartLocked() REQUIRES(mu_);
  // On the store's I/O thread: write and checksum the next bytes of `part`.
  Status OnBytes(size_t part, PartProgress* progress, const char* data, size_t n) EXCLUDES(mu_);
  // On a worker thread: the GET of `part` ended (part == nparts_: the probe).
  void OnPartDone(size_t part, const PartProgress& progress, Result<uint64_t> got) EXCLUDES(mu_);
  Status CheckPart(size_t part, const Result<uint64_t>& got) const;
  bool DrainedLocked() REQUIRES(mu_);
  // On a worker thread, after the last part: verify, then commit the fill.
  void Finish() EXCLUDES(mu_);
  // On the store's I/O thread: what a GET's reply said of the object (its checksum).
  void OnInfo(const ObjectInfo& info) EXCLUDES(mu_);
  // Whether readers must wait for the whole object to be verified before they see any byte.
  bool HoldsBytesLocked() const REQUIRES(mu_);
  // `s` when this download can be checked slice by slice against it (whole parts of slices).
  std::optional<SliceCrcs> UsableSlices(const std::optional<SliceCrcs>& s) const;
  // On the store's I/O thread, under mu_: the slices a sink call finished; kDataLoss on the first
  // that does not match, else have_[part] moves to the end of the last.
  Status CheckSlicesLocked(size_t part, const std::vector<std::pair<size_t, uint32_t>>& done)
      REQUIRES(mu_);

  const FetchContext ctx_;
  const std::string key_;
  const ObjectInfo info_;
  const uint64_t part_size_;
  const size_t nparts_;
  const bool probe_;  // ETag unknown: also check that nothing lies past info_.size
  int fd_ = -1;       // our own dup of the fill's fd: stays valid when the fill is dropped
  // Set once the fetch has failed: sinks stop writing (read without mu_ on the I/O thread).
  std::atomic<bool> stopped_{false};

  mutable Mutex mu_;
  CondVar cv_;
  State state_ GUARDED_BY(mu_) = State::kStarting;
  Status error_ GUARDED_BY(mu_);
  std::vector<PartState> parts_ GUARDED_BY(mu_);
  std::vector<uint64_t> have_ GUARDED_BY(mu_);  // bytes of each part written to fd_, from its start
  // Per part, the smallest `have_` a waiting reader needs; the sink wakes readers only when it
  // gets there, not on every piece of every part.
  std::vector<uint64_t> wake_at_ GUARDED_BY(mu_);
  std::vector<uint32_t> part_crc_ GUARDED_BY(mu_);
  std::deque<size_t> urgent_ GUARDED_BY(mu_);  // parts a reader waits for
  size_t next_ GUARDED_BY(mu_) = 0;            // in-order scan position
  size_t done_ GUARDED_BY(mu_) = 0;
  int inflight_ GUARDED_BY(mu_) = 0;
  bool probe_issued_ GUARDED_BY(mu_) = false;
  bool probe_done_ GUARDED_BY(mu_) = false;
  bool fill_dropped_ GUARDED_BY(mu_) = false;  // after a failure
  bool drained_ GUARDED_BY(mu_) = false;       // reported to the owner
  // The checksum to verify against: from info_, else from the first GET reply (checksum_known_).
  std::optional<uint32_t> expected_crc_ GUARDED_BY(mu_);
  bool checksum_known_ GUARDED_BY(mu_) = false;
  bool verified_ GUARDED_BY(mu_) = false;  // all bytes in, and matched (or nothing to match)
  // The writer's slice CRCs, when the download is checked slice by slice (set once, with
  // checksum_known_).
  std::optional<SliceCrcs> slices_ GUARDED_BY(mu_);
  FillRef fill_ GUARDED_BY(mu_);
  EntryRef entry_ GUARDED_BY(mu_);  // after commit: pins the entry while handles read it
};

}  // namespace kvfs
