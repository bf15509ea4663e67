// ChunkCache's start-up: the entries a previous run left in the cache directory are taken back
// (after their checksum is verified, or marked to be verified on first use), the rest dropped.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cache/cache_dir.h"
#include "cache/chunk_cache.h"
#include "cache/entry_format.h"

namespace kvfs {

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
        spdlog::warn("cache: cannot check {} now (kept): {}", dir_->DataPath(se.file_name),
                     crc.status().ToString());
        unchecked.insert(se.file_name);
        return false;
      }
      spdlog::warn("cache: dropping {}: {}", dir_->DataPath(se.file_name),
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
  spdlog::info("cache: {} entries recovered from {}, {} files dropped", sr.entries.size(),
               dir_->data_dir(), sr.dropped + verify_failures);
}

}  // namespace kvfs
