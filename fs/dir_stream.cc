#include "fs/dir_stream.h"

namespace kvfs {

DirStream::DirStream(std::vector<DirEntry> head, NextPage next_page)
    : head_(std::move(head)), next_page_(std::move(next_page)) {}

Status DirStream::Start() {
  MutexLock l(&mu_);
  return Advance();
}

void DirStream::Restart() {
  cursor_ = Cursor{};
  window_ = {};
  window_start_ = 0;
}

Status DirStream::Advance() {
  std::vector<DirEntry> page;
  Status st = next_page_(&cursor_, &page);
  if (!st.ok()) {
    // The cursor may be half advanced (the guard saw the token): the next read starts over.
    Restart();
    return st;
  }
  window_start_ += window_.size();
  window_ = std::move(page);
  return Status::OK();
}

Status DirStream::Read(uint64_t offset, const Visitor& add) {
  MutexLock l(&mu_);
  for (; offset < head_.size(); ++offset) {
    if (!add(head_[offset], offset + 1)) return Status::OK();
  }
  uint64_t i = offset - head_.size();  // index among the store's entries
  if (i < window_start_) Restart();
  for (;;) {
    for (; i < window_start_ + window_.size(); ++i) {
      if (!add(window_[i - window_start_], head_.size() + i + 1)) return Status::OK();
    }
    if (cursor_.done) return Status::OK();
    KVFS_RETURN_IF_ERROR(Advance());
  }
}

size_t DirStream::bytes() const {
  MutexLock l(&mu_);
  size_t n = sizeof(*this) + cursor_.token.capacity() + cursor_.last_key.capacity();
  for (const auto& e : head_) n += sizeof(e) + e.name.capacity();
  for (const auto& e : window_) n += sizeof(e) + e.name.capacity();
  for (const auto& f : cursor_.open_files) n += sizeof(f) + f.first.capacity();
  if (cursor_.guard) n += cursor_.guard->bytes();
  return n;
}

}  // namespace kvfs
