#include "cache/chunk_cache.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "base/posix_io.h"
#include "cache/cache_dir.h"
#include "cache/entry_format.h"

namespace kvfs {
namespace {

using State = CacheEntry::State;

// Whether a failure to open or check an entry shows that the entry itself is bad - its file is
// gone or is not the regular file kvfs made (a symlink: ELOOP), or it holds other bytes (short,
// checksum mismatch) - so that dropping it is right. Anything else (EMFILE, ENFILE, ENOMEM,
// EACCES, EIO, EINTR...) is the state of the process or the system, not of the entry: dropping on
// it would wipe the whole cache whenever the daemon runs out of descriptors.
bool EntryIsBad(const Status& st) {
  return st.code() == StatusCode::kDataLoss || st.code() == StatusCode::kNotFound ||
         st.sys_errno() == ELOOP;
}

}  // namespace

// ---- ChunkCache ----

ChunkCache::ChunkCache(const ChunkCacheOptions& opts, std::unique_ptr<CacheDir> dir)
    : opts_(opts),
      dir_(std::move(dir)),
      index_(opts.capacity, opts.high_watermark, opts.evict_ratio) {}

ChunkCache::~ChunkCache() = default;

std::string ChunkCache::spool_dir() const { return dir_->spool_dir(); }

Result<std::unique_ptr<ChunkCache>> ChunkCache::Open(const ChunkCacheOptions& opts) {
  if (opts.capacity == 0) return Status::InvalidArgument("cache_size must be greater than 0");
  if (!(opts.high_watermark > 0 && opts.high_watermark <= 1) ||
      !(opts.evict_ratio >= 0 && opts.evict_ratio <= opts.high_watermark)) {
    return Status::InvalidArgument(
        "cache watermarks: need 0 < high_watermark <= 1 and "
        "0 <= evict_ratio <= high_watermark");
  }
  KVFS_ASSIGN_OR_RETURN(std::unique_ptr<CacheDir> dir, CacheDir::Open(opts.dir));
  std::unique_ptr<ChunkCache> cache(new ChunkCache(opts, std::move(dir)));
  cache->Recover(opts.verify_at_open);
  return cache;
}

void ChunkCache::UnlinkAll(const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    if (dir_->UnlinkEntry(n) != 0 && errno != ENOENT) {
      spdlog::warn("cache: cannot remove {}: {}", dir_->DataPath(n), strerror(errno));
    }
  }
}

void ChunkCache::RemoveLocked(CacheEntry* e, std::vector<std::string>* unlink) {
  if (!e->indexed) return;
  unlink->push_back(e->file_name);
  index_.Remove(e);
}

void ChunkCache::Unpin(CacheEntry* e) {
  MutexLock l(&mu_);
  index_.Unpin(e);
}

std::optional<ChunkCache::Peeked> ChunkCache::Peek(const std::string& key) const {
  MutexLock l(&mu_);
  EntryPtr e = index_.Find(key);
  if (e == nullptr || e->state == State::kFilling) return std::nullopt;
  return Peeked{e->size, e->etag, e->fill_time_sec};
}

std::optional<EntryRef> ChunkCache::Lookup(const std::string& key, uint64_t size,
                                           const std::string& etag) {
  std::vector<std::string> unlink;
  EntryPtr e;
  bool verify = false;
  bool stale = false;
  std::string name;
  {
    MutexLock l(&mu_);
    for (;;) {
      e = index_.Find(key);
      if (e == nullptr || e->state == State::kFilling) {
        stats_.misses++;
        return std::nullopt;
      }
      if (e->state == State::kVerifying) {  // another Lookup checks it; wait for its verdict
        verified_cv_.Wait(&mu_);
        continue;
      }
      break;
    }
    stale = e->size != size || !EtagsMatch(e->etag, etag);
    if (stale) {
      spdlog::info("cache: dropping stale entry for {} (size {} etag '{}', wanted {} '{}')", key,
                   e->size, e->etag, size, etag);
      RemoveLocked(e.get(), &unlink);
      stats_.misses++;
    } else {
      index_.Pin(e.get());
      index_.Touch(e.get());
      verify = e->state == State::kUnverified;
      if (verify) e->state = State::kVerifying;
      name = e->file_name;
    }
  }
  if (stale) {  // its file is unlinked outside the mutex
    UnlinkAll(unlink);
    return std::nullopt;
  }
  // File work outside the mutex; the pin keeps the entry (and its file) from being evicted.
  const std::string path = dir_->DataPath(name);
  int fd = dir_->OpenEntry(name, O_RDONLY);
  Status st = fd >= 0 ? Status::OK() : Status::FromErrno(errno, "open " + path);
  if (st.ok() && verify) {
    Result<uint32_t> crc = ChecksumFile(fd, size);
    if (!crc.ok()) {
      st = crc.status();
    } else if (*crc != e->crc) {
      st = Status::DataLoss("checksum mismatch");
    }
  }
  {
    MutexLock l(&mu_);
    if (verify) {
      e->state = st.ok() ? State::kReady : State::kUnverified;
      if (!st.ok()) stats_.verify_failures++;
      verified_cv_.SignalAll();
    }
    if (st.ok()) {
      stats_.hits++;
    } else {
      if (EntryIsBad(st)) {
        spdlog::warn("cache: dropping entry {} for {}: {}", path, key, st.ToString());
        RemoveLocked(e.get(), &unlink);
      } else {
        // A miss this time (the caller fetches from the store); the entry stays for later.
        spdlog::warn("cache: cannot use entry {} for {} now (kept): {}", path, key, st.ToString());
        stats_.open_failures++;
      }
      index_.Unpin(e.get());
      stats_.misses++;
    }
  }
  if (st.ok()) return EntryRef(this, std::move(e), fd);
  if (fd >= 0) close(fd);
  UnlinkAll(unlink);
  return std::nullopt;
}

void ChunkCache::Remove(const std::string& key) {
  std::vector<std::string> unlink;
  {
    MutexLock l(&mu_);
    if (EntryPtr e = index_.Find(key)) RemoveLocked(e.get(), &unlink);
  }
  UnlinkAll(unlink);
}

CacheStats ChunkCache::Stats() const {
  MutexLock l(&mu_);
  CacheStats s = stats_;
  s.entries = index_.entries();
  s.bytes = index_.used_bytes();
  s.capacity = index_.capacity();
  s.evictions = index_.evictions();
  s.bytes_evicted = index_.bytes_evicted();
  return s;
}

}  // namespace kvfs
