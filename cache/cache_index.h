// CacheIndex: the in-memory table of cache entries, their LRU order, pins and byte accounting.
// No I/O: ChunkCache does the file work and calls this under its mutex.
//
// Thread-compatible: not thread-safe by itself; every call must hold ChunkCache::mu_.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace kvfs {

struct CacheEntry {
  enum class State {
    kFilling,     // being written; invisible to Lookup; pinned by its FillRef
    kUnverified,  // recovered from disk at start; checksum not yet checked
    kVerifying,   // a Lookup is checking the checksum now (pinned by it)
    kReady,       // complete and trusted
  };
  std::string key;
  uint64_t size = 0;
  std::string etag;
  uint32_t crc = 0;
  int64_t fill_time_sec = 0;
  uint64_t key_hash = 0;
  uint64_t gen = 0;
  std::string file_name;  // basename in the data dir (fill name while filling)
  State state = State::kFilling;
  int pins = 0;
  bool indexed = false;  // in the table; false once removed (its file is unlinked or going)
  bool in_lru = false;
  std::list<CacheEntry*>::iterator lru_it;
};

class CacheIndex {
 public:
  CacheIndex(uint64_t capacity, double high_watermark, double evict_ratio);

  std::shared_ptr<CacheEntry> Find(const std::string& key) const;
  // Adds an entry (its key must be absent) and counts its bytes. Filling entries stay off the LRU
  // list until MarkReady; others go to the most-recently-used end.
  void Insert(std::shared_ptr<CacheEntry> e);
  // Puts a (filled / verified) entry at the most-recently-used end.
  void Touch(CacheEntry* e);
  // Puts an entry on the LRU list at the least-recently-used end: the next to go. For a chunk
  // fetched ahead that nobody read (fs/read/prefetch_queue.h).
  void Demote(CacheEntry* e);
  void Pin(CacheEntry* e) { e->pins++; }
  // Drops one pin. A removed entry's bytes stay counted until its last pin goes (its file stays
  // on disk while open), so this is where they are released.
  void Unpin(CacheEntry* e);
  // Removes an entry from the table and the LRU list. The caller unlinks its file.
  void Remove(CacheEntry* e);

  // Makes room for `incoming` more bytes: if used + incoming would pass the high watermark, evicts
  // least-recently-used unpinned entries until used + incoming <= (high - ratio) x capacity, or
  // nothing more can go. Evicted entries are appended to `victims` (already removed; the caller
  // unlinks their files). kResourceExhausted if used + incoming would still exceed the capacity.
  Status MakeRoom(uint64_t incoming, std::vector<std::shared_ptr<CacheEntry>>* victims);

  uint64_t used_bytes() const { return used_; }
  uint64_t capacity() const { return capacity_; }
  size_t entries() const { return table_.size(); }
  uint64_t evictions() const { return evictions_; }
  uint64_t bytes_evicted() const { return bytes_evicted_; }

 private:
  const uint64_t capacity_;
  const uint64_t high_bytes_;
  const uint64_t low_bytes_;
  std::unordered_map<std::string, std::shared_ptr<CacheEntry>> table_;
  std::list<CacheEntry*> lru_;  // front: most recently used
  uint64_t used_ = 0;
  uint64_t evictions_ = 0;
  uint64_t bytes_evicted_ = 0;
};

}  // namespace kvfs
