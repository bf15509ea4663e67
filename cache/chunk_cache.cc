#include "cache/chunk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/log.h"
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
      LogWarn("cache: cannot remove {}: {}", dir_->DataPath(n), strerror(errno));
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
      LogInfo("cache: dropping stale entry for {} (size {} etag '{}', wanted {} '{}')", key,
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
        LogWarn("cache: dropping entry {} for {}: {}", path, key, st.ToString());
        RemoveLocked(e.get(), &unlink);
      } else {
        // A miss this time (the caller fetches from the store); the entry stays for later.
        LogWarn("cache: cannot use entry {} for {} now (kept): {}", path, key, st.ToString());
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

void ChunkCache::Demote(const std::string& key, const std::string& etag) {
  MutexLock l(&mu_);
  EntryPtr e = index_.Find(key);
  if (e != nullptr && e->state == CacheEntry::State::kReady && (etag.empty() || e->etag == etag)) {
    index_.Demote(e.get());
  }
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

// ---------------------------------------------------------------------------------------------
// ChunkCache's way in: room is reserved for an entry (evicting what must go), a fill writes it and
// commits it (trailer, then the rename that makes it visible) or aborts it, and a file written
// elsewhere (the write path's spool file) is adopted whole.

namespace {

using State = CacheEntry::State;

}  // namespace

Result<ChunkCache::EntryPtr> ChunkCache::ReserveLocked(const std::string& key, uint64_t size,
                                                       const std::string& etag,
                                                       std::vector<std::string>* unlink) {
  if (EntryPtr old = index_.Find(key)) {
    if (old->state == State::kFilling) {
      return Status::AlreadyExists("cache: a fill of " + key + " is in progress");
    }
    if (old->size == size && EtagsMatch(old->etag, etag)) {
      return Status::AlreadyExists("cache: " + key + " is cached already");
    }
    RemoveLocked(old.get(), unlink);
  }
  if (size > index_.capacity()) {
    stats_.fill_rejected++;
    return Status::ResourceExhausted("cache: " + key + " (" + std::to_string(size) +
                                     " bytes) is larger than the cache (" +
                                     std::to_string(index_.capacity()) + " bytes)");
  }
  std::vector<EntryPtr> victims;
  Status st = index_.MakeRoom(size, &victims);
  for (const EntryPtr& v : victims) unlink->push_back(v->file_name);
  if (!st.ok()) {
    stats_.fill_rejected++;
    return st.Annotate("cache: no room for " + key);
  }
  auto e = std::make_shared<CacheEntry>();
  e->key = key;
  e->size = size;
  e->etag = etag;
  e->key_hash = KeyHash(key);
  e->gen = next_gen_++;
  e->file_name = FillFileName(e->key_hash, e->gen);
  e->state = State::kFilling;
  e->pins = 1;
  index_.Insert(e);
  return e;
}

Result<FillRef> ChunkCache::StartFill(const std::string& key, uint64_t size,
                                      const std::string& etag) {
  std::vector<std::string> unlink;
  Result<EntryPtr> r = Status::Internal("unset");
  {
    MutexLock l(&mu_);
    r = ReserveLocked(key, size, etag, &unlink);
  }
  UnlinkAll(unlink);
  if (!r.ok()) return r.status();
  EntryPtr e = std::move(r).value();
  const std::string path = dir_->DataPath(e->file_name);
  int fd = dir_->OpenEntry(e->file_name, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    Status st = Status::FromErrno(errno, "cache: create " + path);
    AbortFill(std::move(e), -1);
    return st;
  }
  // Sized but sparse: blocks come with the writes. Pre-allocating (posix_fallocate) cost as much
  // as writing the bytes on tmpfs (measured: ~50 ms for 80 MiB), and a full disk is reported
  // cleanly by pwrite (ENOSPC) anyway.
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    Status st = Status::FromErrno(
        errno, "cache: size " + path + " to " + std::to_string(size) + " bytes for " + key);
    AbortFill(std::move(e), fd);
    return st;
  }
  return FillRef(this, std::move(e), fd);
}

void ChunkCache::PublishLocked(CacheEntry* e, const std::string& final_name,
                               std::vector<std::string>* unlink) {
  if (!e->indexed) {  // removed while filling: keep serving the holder's fd, drop the file
    unlink->push_back(final_name);
    return;
  }
  e->file_name = final_name;
  e->state = State::kReady;
  index_.Touch(e);
  stats_.fills++;
}

Result<EntryRef> ChunkCache::CommitFill(EntryPtr e, int fd, std::optional<uint32_t> crc) {
  if (!crc.has_value()) {
    Result<uint32_t> c = ChecksumFile(fd, e->size);
    if (!c.ok()) {
      AbortFill(std::move(e), fd);
      return c.status().Annotate("cache: commit");
    }
    crc = *c;
  }
  EntryMeta m{e->key, e->size, e->etag, *crc, static_cast<int64_t>(time(nullptr))};
  Status st = WriteTrailer(fd, m, dir_->DataPath(e->file_name));
  if (!st.ok()) {
    AbortFill(std::move(e), fd);
    return st;
  }
  const std::string final_name = EntryFileName(e->key_hash, e->gen);
  const std::string from = dir_->DataPath(e->file_name);  // file_name changes only here
  const int rc = dir_->RenameEntry(e->file_name, final_name);
  const int err = errno;
  std::vector<std::string> unlink;
  {
    MutexLock l(&mu_);
    e->crc = *crc;
    e->fill_time_sec = m.fill_time_sec;
    if (rc == 0 || !e->indexed) PublishLocked(e.get(), final_name, &unlink);
  }
  UnlinkAll(unlink);
  if (rc != 0 && e->indexed) {
    st = Status::FromErrno(err, "cache: rename " + from);
    AbortFill(std::move(e), fd);
    return st;
  }
  return EntryRef(this, std::move(e), fd);
}

void ChunkCache::AbortFill(EntryPtr e, int fd) {
  std::vector<std::string> unlink;
  {
    MutexLock l(&mu_);
    stats_.fill_aborts++;
    RemoveLocked(e.get(), &unlink);
    index_.Unpin(e.get());
  }
  UnlinkAll(unlink);
  if (fd >= 0) close(fd);
}

bool ChunkCache::AdoptFile(const std::string& key, uint64_t size, const std::string& etag,
                           const std::string& path, std::optional<uint32_t> known_crc) {
  // A spool file (absolute path, kvfs's own directory): never through a symlink either.
  int fd = open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    LogWarn("cache: cannot adopt {} for {}: {}", path, key, strerror(errno));
    return false;
  }
  struct stat st;
  Result<uint32_t> crc = Status::DataLoss("size");
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) == size) {
    crc = known_crc ? Result<uint32_t>(*known_crc) : ChecksumFile(fd, size);
  }
  std::vector<std::string> unlink;
  // A Result is never built from an OK status: take the checksum's error, or reserve.
  Result<EntryPtr> r = Status::Internal("unset");
  if (!crc.ok()) {
    r = crc.status();
  } else {
    MutexLock l(&mu_);
    r = ReserveLocked(key, size, etag, &unlink);
  }
  UnlinkAll(unlink);
  if (!r.ok()) {
    close(fd);
    if (r.status().code() != StatusCode::kAlreadyExists) {
      LogInfo("cache: not adopting {} for {}: {}", path, key, r.status().ToString());
    }
    return false;
  }
  EntryPtr e = std::move(r).value();
  EntryMeta m{key, size, etag, *crc, static_cast<int64_t>(time(nullptr))};
  const std::string final_name = EntryFileName(e->key_hash, e->gen);
  Status ws = WriteTrailer(fd, m, path);
  if (ws.ok() && dir_->RenameIntoData(path, final_name) != 0) {
    ws = Status::FromErrno(errno, "rename " + path + " into " + dir_->data_dir());
  }
  if (!ws.ok()) {
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {  // give the file back as it was
      LogWarn("cache: cannot restore {}: {}", path, strerror(errno));
    }
    LogInfo("cache: not adopting {} for {}: {}", path, key, ws.ToString());
    AbortFill(std::move(e), fd);
    return false;
  }
  {
    MutexLock l(&mu_);
    e->crc = *crc;
    e->fill_time_sec = m.fill_time_sec;
    PublishLocked(e.get(), final_name, &unlink);
    if (e->indexed) stats_.adopted++;
    index_.Unpin(e.get());
  }
  UnlinkAll(unlink);
  close(fd);
  return true;
}

// ---------------------------------------------------------------------------------------------
// ChunkCache's start-up: the entries a previous run left in the cache directory are taken back
// (after their checksum is verified, or marked to be verified on first use), the rest dropped.

void ChunkCache::Recover(bool verify_now) {
  ScanResult sr = dir_->Scan();
  uint64_t verify_failures = 0;
  std::set<std::string> unchecked;  // could not be checked now (EMFILE...): checked at first use
  if (verify_now) {
    std::erase_if(sr.entries, [&](const ScannedEntry& se) {
      int fd = dir_->OpenEntry(se.file_name, O_RDONLY);
      Result<uint32_t> crc = fd >= 0 ? ChecksumFile(fd, se.meta.size)
                                     : Result<uint32_t>(Status::FromErrno(errno, "open"));
      if (fd >= 0) close(fd);
      if (crc.ok() && *crc == se.meta.crc) return false;
      if (!crc.ok() && crc.status().code() != StatusCode::kDataLoss &&
          crc.status().code() != StatusCode::kNotFound) {
        LogWarn("cache: cannot check {} now (kept): {}", dir_->DataPath(se.file_name),
                crc.status().ToString());
        unchecked.insert(se.file_name);
        return false;
      }
      LogWarn("cache: dropping {}: {}", dir_->DataPath(se.file_name),
              crc.ok() ? "checksum mismatch" : crc.status().ToString());
      dir_->UnlinkEntry(se.file_name);
      verify_failures++;
      return true;
    });
  }
  // Oldest first, so the most recently filled end up most recently used.
  std::sort(sr.entries.begin(), sr.entries.end(), [](const ScannedEntry& a, const ScannedEntry& b) {
    return a.meta.fill_time_sec < b.meta.fill_time_sec;
  });
  std::vector<std::string> unlink;
  {
    MutexLock l(&mu_);
    next_gen_ = sr.max_gen + 1;
    for (ScannedEntry& se : sr.entries) {
      auto e = std::make_shared<CacheEntry>();
      e->key = std::move(se.meta.key);
      e->size = se.meta.size;
      e->etag = std::move(se.meta.etag);
      e->crc = se.meta.crc;
      e->fill_time_sec = se.meta.fill_time_sec;
      e->key_hash = se.key_hash;
      e->gen = se.gen;
      e->file_name = se.file_name;
      e->state = verify_now && unchecked.count(se.file_name) == 0 ? CacheEntry::State::kReady
                                                                  : CacheEntry::State::kUnverified;
      index_.Insert(std::move(e));
    }
    stats_.recovered = sr.entries.size();
    stats_.recovery_dropped = sr.dropped + verify_failures;
    stats_.verify_failures = verify_failures;
    // A smaller capacity than last time: trim now rather than at the first fill.
    std::vector<EntryPtr> victims;
    (void)index_.MakeRoom(0, &victims);
    for (const EntryPtr& v : victims) unlink.push_back(v->file_name);
  }
  UnlinkAll(unlink);
  LogInfo("cache: {} entries recovered from {}, {} files dropped", sr.entries.size(),
          dir_->data_dir(), sr.dropped + verify_failures);
}

}  // namespace kvfs
