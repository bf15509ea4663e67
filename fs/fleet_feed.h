// FleetFeed: the chunks the fleet's nodes store and delete, published through the store itself, so
// that a node can answer lookups of names it missed - and of the names other nodes stored since -
// without a request, and still see a new chunk within about a second.
//
// Without it a miss may be cached only briefly (FsOptions::negative_ttl_ms), because another node
// may store that name at any moment: every lookup of a name not seen for that long costs a request.
// With it, every node announces what it stored and deleted in small entries under
// key_prefix + "~kvfs-feed/" ('~' is always encoded in names, so no file maps there), and reads
// the other nodes' entries every interval; a cached miss (or a directory listing) then holds as
// long as the feed proves that no kvfs node stored the name since (Covers), up to
// FsOptions::feed_miss_ttl_secs, the bound for writers that are not kvfs.
//
// Entries. Each node writes "<root><node>/<seq, 16 hex>" followed by its events, "~s<rel>~<size>
// ~<etag>" (stored) or "~r<rel>" (deleted), rel being the chunk's key without key_prefix. When
// what an interval gathered fits in a 1,024-byte key, the key is the whole entry (an empty
// object): one LIST page tells a reader 1,000 entries' names, sizes and ETags, no GET. When it does
// not (a burst: an engine stores a request's chunks back to back, 16 to 1,000 in a second, with
// names up to 255 bytes), the entry is "<root><node>/<seq>~b" and its body holds the events, up to
// kMaxBodyBytes: one PUT per write however large the burst, one GET per such entry for a reader.
// A node's sequence numbers run 1, 2, 3... per mount (node ids are new per mount); each node
// deletes its own entries once they are `retention` old, and anybody deletes entries ten
// retentions older than the newest listed (the store's Last-Modified against the store's, never
// two nodes' clocks: a node that died). A reader of an older kvfs takes a "~b" entry for a key
// that is no entry: a hole in that node's numbers, so it asks its misses again (a gap).
//
// What a reader trusts. A read of the feed that completed without error and started at S has
// applied every entry listed then. A writer lists its events within one interval of the close
// (or unlink) that caused them (half of one, at most two writes an interval), so a miss recorded
// at t is still right at `now` for every chunk stored before S - interval - (request time). A
// reader trusts misses recorded at or after the last discontinuity (its first read, or a read that
// found an entry missing between two it read: lost, late, or expired while this node lagged - then
// earlier misses are asked again) while its last complete read started at most 2 intervals + 1 s
// ago (Covers). A writer that dies between a close and its next interval leaves those chunks
// unannounced: they are found within feed_miss_ttl_secs, like any other writer's.
//
// Cost per node: one LIST per interval (one page up to ~1,000 entries fleet-wide: with 10 s of
// retention and 400 ms intervals, 40 writing nodes), one PUT per write - at once, at most two
// writes per interval, each one entry holding all that accumulated (more entries only past
// kMaxBodyBytes, ~1,200 events of 255-byte names) - one GET per bodied entry of the other nodes,
// and one DELETE per entry it wrote, 10 s later.
//
// A store that refuses the feed (a bucket policy without s3:DeleteObject or s3:PutObject under
// ~kvfs-feed/, or DELETEs that keep failing): a node keeps at most kMaxWritten of its own entries
// listed - past that it writes no more until its deletes go through again (the cap is ~5 times
// what 10 s of retention hold at two writes an interval), and a refused PUT stops its writes for
// the mount's life; each is logged once and counted (kvfs_feed_refused, kvfs_feed_writes_paused),
// and the names this node stores are then found within feed_miss_ttl_secs, the floor. A reader
// reads at most kMaxListed entries an interval: a longer feed (many such nodes) is not read to
// its end, so its reads are incomplete and misses fall back to negative_cache_ttl_ms.
//
// Memory: the outbox holds at most max_outbox events (more are dropped and counted: those names
// are then found within feed_miss_ttl_secs); entries whose PUT failed are kept for the next
// interval (their events count against max_outbox); the reader keeps the keys of the last listing
// and reads one body (at most kMaxBodyBytes) at a time.
//
// Thread-safety: thread-safe. One background thread (Start/Stop); `apply` runs on it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "fs/feed_stats.h"
#include "fs/meta_cache.h"
#include "objstore/object_store.h"

namespace kvfs {

struct FeedEvent {
  enum Kind { kStored, kRemoved };
  Kind kind = kStored;
  // info.key: the chunk's whole key. kStored: size and ETag; mtime_sec from the entry.
  ObjectInfo info;
};

struct FleetFeedOptions {
  std::string key_prefix;  // the mount's: "" or ending in '/'
  std::string node_id;     // new per mount; [A-Za-z0-9-] only
  std::chrono::milliseconds interval{400};
  std::chrono::milliseconds retention{10'000};
  size_t max_outbox = 100'000;
};

class FleetFeed {
 public:
  using Apply = std::function<void(const FeedEvent&)>;
  static constexpr size_t kMaxKeyBytes = 1024;
  // The largest body of an entry written or read (a larger listed one is not an entry of ours).
  static constexpr size_t kMaxBodyBytes = 1 << 20;
  // Own entries kept listed (awaiting their DELETE) before writes pause; entries read per poll.
  static constexpr size_t kMaxWritten = 256;
  static constexpr size_t kMaxListed = 10'000;

  // `apply` is called on the feed's thread with each event another node announced.
  FleetFeed(std::shared_ptr<ObjectStore> store, FleetFeedOptions options, Apply apply,
            SteadyClock clock = {});
  ~FleetFeed();
  FleetFeed(const FleetFeed&) = delete;
  FleetFeed& operator=(const FleetFeed&) = delete;

  void Start() EXCLUDES(mu_);
  // Writes what is still in the outbox, then joins the thread.
  void Stop() EXCLUDES(mu_);

  // This node stored or deleted a chunk (the close or unlink has succeeded): listed for the other
  // nodes at the next interval.
  void Announce(FeedEvent event) EXCLUDES(mu_);

  // Whether a miss (or listing) recorded at `t` may still be trusted now (see the class comment).
  bool Covers(std::chrono::steady_clock::time_point t) const EXCLUDES(mu_);

  // One interval's work now, on the caller's thread (tests; Start not called): write the outbox,
  // read the feed, expire old entries. The status of the read.
  Status Step() EXCLUDES(mu_);

  FeedStats Stats() const EXCLUDES(mu_);

  // The key of one entry (node's seq-th) with `events` (rel keys), and back; nullopt for keys
  // that are not entries. Exposed for tests.
  std::string root() const { return root_; }
  struct Entry {
    std::string node;
    uint64_t seq = 0;
    bool bodied = false;            // "~b": the events are in the object's body
    std::vector<FeedEvent> events;  // keys without key_prefix; empty when bodied
  };
  static std::optional<Entry> ParseEntry(std::string_view root, std::string_view key);
  // The events of a body (or of a key after its sequence number): "~s...~r...". False when it
  // does not parse (nothing is appended then).
  static bool ParseEvents(std::string_view text, std::vector<FeedEvent>* events);

 private:
  using Time = std::chrono::steady_clock::time_point;
  Time Now() const;
  // The feed was read completely within the last two intervals and a second.
  bool LiveLocked(Time now) const REQUIRES(mu_);
  void Run() EXCLUDES(mu_);
  struct Unwritten {
    std::string key;
    std::string body;  // empty for an entry that is all key
    size_t events = 0;
  };
  // The outbox as entries (PUT); failed ones stay for the next interval.
  void Flush() EXCLUDES(mu_);
  // The events of a bodied entry another node wrote (`size` as listed), appended to `events`.
  Status ReadBody(const std::string& key, uint64_t size, std::vector<FeedEvent>* events);
  Status Poll() EXCLUDES(mu_);
  struct Listed {
    std::string key;
    int64_t mtime = 0;
    uint64_t size = 0;
  };
  void Expire(int64_t newest_mtime, const std::vector<Listed>& listed) EXCLUDES(mu_);
  // A request of this node's own entries failed: counted, and a policy's refusal logged.
  void OwnRequestFailed(const char* what, const std::string& key, const Status& st) EXCLUDES(mu_);
  // "~s<rel>~<size>~<etag>" or "~r<rel>"; empty when the key is not under key_prefix.
  std::string Token(const FeedEvent& event) const;

  const std::shared_ptr<ObjectStore> store_;
  const FleetFeedOptions options_;
  const Apply apply_;
  const SteadyClock clock_;
  const std::string root_;  // key_prefix + "~kvfs-feed/"

  mutable Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
  std::deque<std::string> outbox_ GUARDED_BY(mu_);  // tokens not yet in an entry
  size_t unwritten_events_ GUARDED_BY(mu_) = 0;     // events in unwritten_
  // Writes paused: kMaxWritten own entries listed (DELETEs failing), or stopped for good (a PUT
  // refused by the store's policy). Announce drops while either holds.
  bool paused_ GUARDED_BY(mu_) = false;
  bool put_refused_ GUARDED_BY(mu_) = false;
  // The thread's own state (Step and what it calls).
  uint64_t next_seq_ = 1;
  std::deque<Unwritten> unwritten_;                   // entries whose PUT failed
  std::deque<std::pair<std::string, Time>> written_;  // own entries, oldest first
  std::unordered_set<std::string> applied_;           // entry keys of the last listing
  std::unordered_map<std::string, uint64_t> cursor_;  // node -> highest seq read
  bool first_read_done_ = false;
  bool warned_delete_ = false, warned_listing_ = false;  // logged once
  // What Covers reads.
  std::optional<Time> last_read_start_ GUARDED_BY(mu_);  // of the last complete read
  Time trust_since_ GUARDED_BY(mu_){};                   // of the last discontinuity
  FeedCounters counters_;
  std::thread thread_;
};

}  // namespace kvfs
