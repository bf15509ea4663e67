// The handles a ChunkCache hands out (cache/chunk_cache.h): EntryHandle pins an entry, EntryRef
// reads a ready one, FillRef owns an entry being filled until Commit or Reset.
#include "cache/chunk_cache.h"

namespace kvfs {

void EntryHandle::TakeFrom(EntryHandle& o) noexcept {
  cache_ = o.cache_;
  entry_ = std::move(o.entry_);
  fd_ = o.fd_;
  o.entry_.reset();
  o.fd_ = -1;
}

uint64_t EntryHandle::size() const { return entry_->size; }
const std::string& EntryHandle::key() const { return entry_->key; }

void EntryRef::Reset() {
  if (entry_ == nullptr) return;
  cache_->Unpin(entry_.get());
  if (fd_ >= 0) close(fd_);
  entry_.reset();
  fd_ = -1;
}

const std::string& EntryRef::etag() const { return entry_->etag; }

void FillRef::Reset() {
  if (entry_ == nullptr) return;
  cache_->AbortFill(std::move(entry_), fd_);
  entry_.reset();
  fd_ = -1;
}

Result<EntryRef> FillRef::Commit(std::optional<uint32_t> crc) {
  if (entry_ == nullptr) return Status::Internal("Commit of an empty FillRef");
  int fd = fd_;
  fd_ = -1;
  return cache_->CommitFill(std::move(entry_), fd, crc);
}

}  // namespace kvfs
