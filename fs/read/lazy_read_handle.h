// LazyReadHandle: a read handle that opens the object in the reader only at its first read. An
// open that never reads (llm-d's existence check is open + close; a stat through an open file)
// transfers nothing and takes no cache space.
//
// Thread-safety: thread-safe. mu_ guards the one-time open (a first read may wait on the store
// for its start while holding it; other readers of the handle wait for the same open); the inner
// handle is thread-safe as every ReadHandle is.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "fs/read/chunk_reader.h"

namespace kvfs {

class LazyReadHandle : public ReadHandle {
 public:
  // `reader` outlives the handle. `local`: whether reads will be served from a local file (the
  // caller's FOPEN_DIRECT_IO choice is made before anything is opened).
  LazyReadHandle(ChunkReader* reader, std::string key, ObjectInfo info, bool local);

  Result<uint64_t> Read(uint64_t offset, uint64_t size, char* buf) override;
  Result<FdRange> ReadFd(uint64_t offset, uint64_t size) override;
  bool Local() const override { return local_; }
  // Not opened yet: a read waits for the open unless the chunk is in the local cache (then the
  // open is a hit and is done here, so the read stays on the FUSE thread).
  bool WouldWait(uint64_t offset, uint64_t size) const override;
  // Opens now and, when reads are served from a local file, waits until every byte is there
  // (read through a bounded buffer).
  Status KeepCached() override;
  // Opens now only when the reader holds a complete local copy of this very object (an open
  // that would download returns -1 and transfers nothing).
  int PassthroughFd() override;
  void NotePassthrough() override;

 private:
  Result<ReadHandle*> Inner() const EXCLUDES(mu_);

  ChunkReader* const reader_;
  const std::string key_;
  const ObjectInfo info_;
  const bool local_;
  mutable Mutex mu_;
  mutable std::unique_ptr<ReadHandle> inner_ GUARDED_BY(mu_);
  mutable Status open_failure_ GUARDED_BY(mu_);  // a failed open is reported by every read
  mutable bool opened_ GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<ReadHandle>> retired_ GUARDED_BY(mu_);  // replaced by KeepCached
};

}  // namespace kvfs
