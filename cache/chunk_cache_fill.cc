// ChunkCache's way in: room is reserved for an entry (evicting what must go), a fill writes it and
// commits it (trailer, then the rename that makes it visible) or aborts it, and a file written
// elsewhere (the write path's spool file) is adopted whole. Lookups, removal and the counters are
// in chunk_cache.cc, the start-up in chunk_cache_recovery.cc.
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
#include "cache/chunk_cache.h"
#include "cache/entry_format.h"

namespace kvfs {
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
    spdlog::warn("cache: cannot adopt {} for {}: {}", path, key, strerror(errno));
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
      spdlog::info("cache: not adopting {} for {}: {}", path, key, r.status().ToString());
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
      spdlog::warn("cache: cannot restore {}: {}", path, strerror(errno));
    }
    spdlog::info("cache: not adopting {} for {}: {}", path, key, ws.ToString());
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

}  // namespace kvfs
