// EarlyUpload: the parts of a chunk that go to the store while the engine is still writing it.
// (Uploader's close-time multipart upload is the same object with every part sent by Complete.)
//
// An engine writes a chunk front to back in one write(); FUSE hands it over in 1 MiB pieces, so
// the first parts are complete long before close(). Each time the prefix written without gaps
// reaches another whole part, that part is sent (the multipart upload is created with the first
// one), so on a network-bound store the upload overlaps the write instead of following it. close()
// sends the rest and completes. The pieces of one O_DIRECT write arrive out of order (the kernel
// sends them all at once, to several FUSE threads), so pieces written past a gap are remembered
// and join the prefix when the gap fills. The object appears only at completion, after the
// whole-chunk check: a partial, rejected or abandoned chunk never shows, and its upload is aborted.
//
// Anything that may change bytes already sent (a write behind them, a truncate, a rename to
// another key) makes the early upload unusable; close() then uploads the spool file the normal way
// and the early upload is aborted. A failed early part does the same, so an early upload never
// makes a write fail that the normal path would have stored.
//
// An abort (a failure, or the destructor of an upload never completed) on a thread with a deadline
// (a FUSE request under blocking_timeout) is handed to `aborts` when given, so that the close()
// that gave up returns without waiting for it (fs/abort_queue.h); elsewhere it runs in place.
//
// Thread-safety: not thread-safe; the owner serializes calls (SpoolFile::mu). The store's part
// callbacks touch only the internal shared state, under its own mutex. The spool fd must stay
// open until the object is destroyed (the destructor waits for parts in flight).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "fs/abort_queue.h"
#include "objstore/object_store.h"

namespace kvfs {

class EarlyUpload {
 public:
  // `aborts`: where aborts under a deadline go (outlives this object); null: always in place.
  // `user_xattrs`: the object's attributes (MultipartOptions), fixed when the upload is created.
  EarlyUpload(ObjectStore* store, std::string key, int fd, uint64_t part_size, int parallelism,
              AbortQueue* aborts = nullptr, std::string user_xattrs = "");
  ~EarlyUpload();  // waits for parts in flight; aborts the upload unless it was completed
  EarlyUpload(const EarlyUpload&) = delete;
  EarlyUpload& operator=(const EarlyUpload&) = delete;

  const std::string& key() const { return key_; }
  // Bytes [offset, offset+n) were written to the spool: sends the parts that are now whole (never
  // blocks on a part; it may block once, on creating the multipart upload).
  void OnWrite(uint64_t offset, uint64_t n);
  // Bytes already sent may have changed: the upload will not be used.
  void Invalidate() { valid_ = false; }
  // Parts went out, none failed so far, and nothing invalidated them: Complete can store an
  // object of `size` bytes.
  bool Usable(uint64_t size) const;
  // Sends the rest of [0, size), waits for every part and completes (If-None-Match: * when
  // `conditional`). On failure the upload is aborted and the error returned.
  Result<ObjectInfo> Complete(uint64_t size, bool conditional);

 private:
  // What the part callbacks share with the owner.
  struct Shared {
    Mutex mu;
    CondVar cv;
    int in_flight GUARDED_BY(mu) = 0;
    Status error GUARDED_BY(mu);
    std::vector<CompletedPart> parts GUARDED_BY(mu);
  };
  uint64_t sent_end() const { return static_cast<uint64_t>(next_part_) * part_size_; }
  // Records bytes [start, end) as written and extends the gap-free prefix. False when too many
  // out-of-order ranges are pending.
  bool AddWritten(uint64_t start, uint64_t end);
  // Sends parts up to (not including) part index `end`, bounded by `size`. With `wait`, blocks
  // for room in flight; without, stops when the parallelism is used up.
  Status SendParts(int end, uint64_t size, bool wait);
  void Abort();

  ObjectStore* const store_;
  const std::string key_;
  const int fd_;
  const uint64_t part_size_;
  const int parallelism_;
  AbortQueue* const aborts_;
  const std::string user_xattrs_;
  const std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  std::string upload_id_;  // empty until the first part is due
  bool valid_ = true;
  bool finished_ = false;    // completed or aborted
  uint64_t contiguous_ = 0;  // bytes written from offset 0 without a gap
  // Ranges written past the first gap (start -> end, disjoint, not touching): they join the
  // prefix when the gap fills. Bounded by kMaxPending; random writes give up the early upload.
  std::map<uint64_t, uint64_t> pending_;
  int next_part_ = 0;  // parts sent so far (0-based index of the next one)
};

}  // namespace kvfs
