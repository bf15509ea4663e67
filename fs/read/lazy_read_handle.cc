#include "fs/read/lazy_read_handle.h"

namespace kvfs {

LazyReadHandle::LazyReadHandle(ChunkReader* reader, std::string key, ObjectInfo info, bool local)
    : reader_(reader), key_(std::move(key)), info_(std::move(info)), local_(local) {}

Result<ReadHandle*> LazyReadHandle::Inner() const {
  MutexLock l(&mu_);
  if (!opened_) {
    opened_ = true;
    auto h = reader_->Open(key_, info_);
    if (h.ok()) {
      inner_ = std::move(h).value();
    } else {
      open_failure_ = h.status();
    }
  }
  if (!inner_) return open_failure_;
  return inner_.get();
}

Result<uint64_t> LazyReadHandle::Read(uint64_t offset, uint64_t size, char* buf) {
  KVFS_ASSIGN_OR_RETURN(ReadHandle * h, Inner());
  return h->Read(offset, size, buf);
}

Result<FdRange> LazyReadHandle::ReadFd(uint64_t offset, uint64_t size) {
  KVFS_ASSIGN_OR_RETURN(ReadHandle * h, Inner());
  return h->ReadFd(offset, size);
}

Status LazyReadHandle::KeepCached() {
  KVFS_ASSIGN_OR_RETURN(ReadHandle * h, Inner());
  if (!local_) return Status::OK();  // a stream: nothing to keep
  if (!h->Local()) {
    // The open streamed although the cache could hold the object (it lost a race with a download
    // or an adoption of the same key): open again, now that the copy is there or can be made.
    // The first handle stays alive: a read on another thread may be using it.
    MutexLock l(&mu_);
    auto again = reader_->Open(key_, info_);
    if (again.ok() && (*again)->Local()) {
      retired_.push_back(std::move(inner_));
      inner_ = std::move(again).value();
    }
    h = inner_.get();
    if (!h->Local()) {
      return Status::Unavailable("no local copy of '" + key_ + "' could be made: its reads stream");
    }
  }
  constexpr uint64_t kStep = 1 << 20;
  std::unique_ptr<char[]> buf(new char[kStep]);
  for (uint64_t off = 0; off < info_.size; off += kStep) {
    KVFS_ASSIGN_OR_RETURN(uint64_t n, h->Read(off, kStep, buf.get()));
    if (n == 0) break;
  }
  return Status::OK();
}

int LazyReadHandle::PassthroughFd() {
  auto copy = reader_->CachedCopy(key_);
  if (!local_ || !copy || copy->size != info_.size || copy->etag != info_.etag) return -1;
  auto h = Inner();
  return h.ok() ? (*h)->PassthroughFd() : -1;
}

void LazyReadHandle::NotePassthrough() {
  auto h = Inner();
  if (h.ok()) (*h)->NotePassthrough();
}

bool LazyReadHandle::WouldWait(uint64_t offset, uint64_t size) const {
  {
    MutexLock l(&mu_);
    if (opened_) return inner_ != nullptr && inner_->WouldWait(offset, size);
  }
  if (!reader_->CachedCopy(key_)) return true;
  auto h = Inner();
  return h.ok() && (*h)->WouldWait(offset, size);
}

}  // namespace kvfs
