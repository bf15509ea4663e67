#include "fs/read/read_handles.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/log.h"
#include "base/posix_io.h"

namespace kvfs {
namespace {

// Reads [offset, offset+size) of a file holding an object of `object_size` bytes.
Result<uint64_t> PreadRange(int fd, uint64_t object_size, uint64_t offset, uint64_t size, char* buf,
                            const std::string& key) {
  if (offset >= object_size) return uint64_t{0};
  const uint64_t want = std::min(size, object_size - offset);
  KVFS_RETURN_IF_ERROR(PreadExact(fd, buf, want, offset, "cache file of " + key));
  return want;
}

FdRange Clip(int fd, uint64_t object_size, uint64_t offset, uint64_t size) {
  FdRange r;
  r.fd = fd;
  r.offset = offset;
  r.length = offset >= object_size ? 0 : std::min(size, object_size - offset);
  return r;
}

template <typename T>
Result<T> Counted(Result<T> r, ReaderCounters* c) {
  if (!r.ok()) c->read_errors++;
  return r;
}

}  // namespace

Result<uint64_t> CacheHitHandle::Read(uint64_t offset, uint64_t size, char* buf) {
  Result<uint64_t> r = PreadRange(entry_.fd(), entry_.size(), offset, size, buf, entry_.key());
  if (r.ok()) counters_->bytes_from_cache += *r;
  return Counted(std::move(r), counters_);
}

int CacheHitHandle::PassthroughFd() {
  struct stat st;
  if (fstat(entry_.fd(), &st) != 0 || static_cast<uint64_t>(st.st_size) != entry_.size()) return -1;
  return entry_.fd();
}

Result<FdRange> CacheHitHandle::ReadFd(uint64_t offset, uint64_t size) {
  FdRange r = Clip(entry_.fd(), entry_.size(), offset, size);
  counters_->bytes_from_cache += r.length;
  return r;
}

FetchHandle::FetchHandle(std::shared_ptr<ObjectFetch> fetch,
                         std::unique_ptr<StreamHandle> disk_full, ReaderCounters* counters)
    : fetch_(std::move(fetch)), disk_full_(std::move(disk_full)), counters_(counters) {}

FetchHandle::~FetchHandle() = default;

Result<uint64_t> FetchHandle::Read(uint64_t offset, uint64_t size, char* buf) {
  Status st = fetch_->WaitFor(offset, size);
  if (st.code() == StatusCode::kNoSpace) return disk_full_->Read(offset, size, buf);
  if (!st.ok()) return Counted<uint64_t>(st, counters_);
  return Counted(PreadRange(fetch_->fd(), fetch_->size(), offset, size, buf, fetch_->key()),
                 counters_);
}

Result<FdRange> FetchHandle::ReadFd(uint64_t offset, uint64_t size) {
  Status st = fetch_->WaitFor(offset, size);
  // No file holds the bytes: the caller copies them through Read, which streams.
  if (st.code() == StatusCode::kNoSpace) {
    return Status::NotSupported("cache disk full while downloading " + fetch_->key());
  }
  if (!st.ok()) return Counted<FdRange>(st, counters_);
  return Clip(fetch_->fd(), fetch_->size(), offset, size);
}

bool FetchHandle::WouldWait(uint64_t offset, uint64_t size) const {
  return fetch_->WouldWait(offset, size);
}

StreamHandle::StreamHandle(std::shared_ptr<ObjectStore> store, ObjectInfo info,
                           RangedGetOptions opts, bool verify, ReaderCounters* counters)
    : store_(std::move(store)),
      info_(std::move(info)),
      opts_(opts),
      counters_(counters),
      verifier_(info_.key, info_.size, info_.crc32c, verify) {}

StreamHandle::~StreamHandle() {
  // Bytes handed out that were never checked as a whole (a partial read).
  if (served_ && verifier_.outcome() == StreamVerifier::Outcome::kOpen) CountUnverified();
}

void StreamHandle::CountUnverified() {
  if (!unverified_counted_.exchange(true)) counters_->unverified++;
}

Result<uint64_t> StreamHandle::Read(uint64_t offset, uint64_t size, char* buf) {
  uint64_t requests = 0;
  Result<uint64_t> r =
      ParallelRangedGet(store_.get(), info_, offset, size, buf, opts_, &requests,
                        [this](const ObjectInfo& info) { verifier_.OnInfo(info); });
  counters_->get_requests += requests;
  if (!r.ok()) return Counted(std::move(r), counters_);
  counters_->bytes_from_store += *r;
  if (Status st = verifier_.Add(offset, buf, *r); !st.ok()) {
    if (!reported_.exchange(true)) {
      LogError("read: {}", st.ToString());
      counters_->verify_failures++;
    }
    return Counted<uint64_t>(st, counters_);
  }
  if (*r > 0) served_ = true;
  // Counted when it is known, before the read returns: read whole with nothing to check against
  // (or `verify: off`), or a read pattern the verifier gave up on.
  if (verifier_.outcome() == StreamVerifier::Outcome::kUnverified) CountUnverified();
  return r;
}

}  // namespace kvfs
