// DirListingCache answers "does this name exist?" for a directory from one recent full listing.
// Inference engines look up many chunk names that do not exist (LMCache's MP adapter calls
// exists() on every query, and most queries miss); without this each distinct missing name costs
// a HEAD (and, with subdirectories, a one-key LIST). After a few such misses in one directory
// within the TTL, the directory is listed once (paged, delimiter "/"), and until the listing is
// TTL seconds old a name absent from it is reported missing without a request.
//
// A lookup that found neither an object nor any key under "name/" also knows that the directory
// "name/" is empty; that is recorded as an (empty) listing too (RecordEmpty), and a name is known
// missing when any ancestor directory's fresh listing lacks the path component leading to it. So
// the engines' walks down hashed trees that do not exist yet (exists() of
// "<root>/<model>/.../<hhh>/<hh>/<hash>.bin", mkdir -p of those levels) cost the store nothing
// below the first missing level.
//
// A lookup's own LIST (fs/filesystem.cc, Lookups) that saw every key under a directory records that
// directory's names too (RecordListing), so misses anywhere in a subtree one lookup listed whole
// cost nothing.
//
// Visibility is the same as for cached misses (Options::answers: negative_ttl_ms, or while the
// fleet feed covers the listing): a chunk another node uploads after the listing is found within
// that. Names stored since - by this node, or by others as the feed tells (NoteAdded) - are added
// to the listings above them, so no listing hides them. Directories over max_entries are not
// listed (their misses keep costing a HEAD).
//
// It also keeps what lookups found in each directory (NoteChild): in a directory where they
// found files and never a subdirectory - a chunk directory - a name is looked up with one HEAD
// rather than one LIST (FilesOnly; filesystem.cc, Lookups). That knowledge lasts shape_ttl after
// the last find.
//
// Memory: at most options.max_total_names names across all listings (the oldest listings are
// dropped to make room; ~150 bytes a name with a 60-byte key, estimated) and kMaxDirs directory
// records (~200 bytes each), so ~30 MiB + ~25 MiB with the defaults, however many directories are
// looked up.
//
// Thread-safe: one internal mutex (a leaf lock); listings run outside it, at most one per
// directory at a time (other threads meanwhile ask the store as before).
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "fs/meta_cache.h"
#include "objstore/object_store.h"

namespace kvfs {

class DirListingCache {
 public:
  struct Options {
    std::chrono::milliseconds ttl{30'000};  // 0: off
    size_t max_entries = 100000;            // larger directories are not listed
    size_t max_total_names = 200000;        // names held across all listings (oldest dropped)
    // Misses in one directory within a TTL that trigger a listing; 0: misses never do.
    int misses_before_listing = 8;
    // How long a directory's shape (files found, subdirectories found) is remembered after the
    // last find. 0: not kept (FilesOnly is always false).
    std::chrono::milliseconds shape_ttl{30'000};
    // Within ttl, whether a listing (or empty directory) recorded at the given time still answers
    // misses: the filesystem's rule for misses (negative_ttl_ms, or the fleet feed's cover).
    // Unset: ttl alone decides. Called under this cache's lock: it may take leaf locks only.
    std::function<bool(std::chrono::steady_clock::time_point)> answers;
    // Whether a listing made now would answer long enough to be worth its price (the fleet feed
    // is live); misses start none while it says no. Unset: always.
    std::function<bool()> worth_listing;
    // Told of every object a listing finds (outside the lock), e.g. to learn chunk sizes.
    std::function<void(const ObjectInfo&)> on_object;
  };

  DirListingCache(std::shared_ptr<ObjectStore> store, Options options, SteadyClock clock = {});

  // The directory part of a key: everything up to and including the last '/', or "".
  static std::string DirOf(const std::string& key);

  // True when a listing younger than the TTL of DirOf(key), or of any directory above it, lacks
  // the name (file or directory) on the path to `key`.
  bool KnownMissing(const std::string& key) EXCLUDES(mu_);

  using Time = std::chrono::steady_clock::time_point;
  Time Now() const;

  // The directory with listing prefix `dir` ("a/b/") was just found to hold no key at all.
  void RecordEmpty(const std::string& dir) EXCLUDES(mu_);
  // A listing begun at `started` (by a lookup, filesystem.cc) saw every key under `dir`: `names`,
  // the keys of its files and of its directories (without their '/').
  void RecordListing(const std::string& dir, std::unordered_set<std::string> names, Time started)
      EXCLUDES(mu_);

  // Another node stored `key` (the fleet feed): the listings of its directory and of the
  // directories above it no longer answer that it is missing.
  void NoteAdded(const std::string& key) EXCLUDES(mu_);

  // Records that a lookup of `key` missed at the cost of a request. Once enough misses in its
  // directory have accumulated - at least misses_before_listing, and 12 per page the last
  // listing of it took (a LIST costs about 12 HEADs) - lists the directory in the calling thread.
  void NoteMiss(const std::string& key) EXCLUDES(mu_);

  // A lookup found `key` to be a file (is_dir false) or a directory, or this node made it.
  void NoteChild(const std::string& key, bool is_dir) EXCLUDES(mu_);
  // Whether lookups in `dir` ("a/b/") found files and no subdirectory within shape_ttl.
  bool FilesOnly(const std::string& dir) EXCLUDES(mu_);

  // Counters for tests and stats.
  uint64_t listings() const EXCLUDES(mu_);
  // Names held across all listings (at most options.max_total_names).
  size_t names_held() const EXCLUDES(mu_);

  // Directory records kept at most (empty ones recorded by lookups, listed ones, miss counters).
  static constexpr size_t kMaxDirs = 1 << 17;
  // Names noted added that a listing under way may have missed are kept this many (newest), so
  // a listing installed later keeps them (ReplaceNames): ~2.5 MiB of keys at most.
  static constexpr size_t kMaxRecentlyAdded = 16384;

 private:
  struct Dir {
    int misses = 0;
    Time window_start{};
    bool listing = false;  // a listing is being made
    bool too_big = false;  // last attempt found more than max_entries
    Time listed_at{};      // start of the listing that `names` holds (or of the too-big attempt)
    std::shared_ptr<const std::unordered_set<std::string>> names;
    // Names other nodes stored since the listing (NoteAdded), with when they were added.
    std::unordered_map<std::string, Time> added;
    int pages = 0;            // of the last listing made here
    bool files_seen = false;  // since shape_at - shape_ttl
    bool dirs_seen = false;
    Time shape_at{};  // the last NoteChild
  };
  bool Fresh(Time t, Time now) const { return now - t < options_.ttl; }
  bool ShapeFresh(const Dir& d, Time now) const {
    return (d.files_seen || d.dirs_seen) && now - d.shape_at < options_.shape_ttl;
  }
  void ListDir(const std::string& dir) EXCLUDES(mu_);
  void Record(const std::string& dir, std::shared_ptr<const std::unordered_set<std::string>> names,
              Time listed_at) EXCLUDES(mu_);
  // Whether `dir` has (or, after dropping records no longer answering anything, may get) a record.
  bool RoomForDir(const std::string& dir, Time now) REQUIRES(mu_);
  // Replaces d's names (and drops its added ones), keeping total_names_.
  void SetNames(Dir* d, std::shared_ptr<const std::unordered_set<std::string>> names) REQUIRES(mu_);
  // Makes `names`, a listing of `dir` begun at listed_at, what d answers from: room is made, and
  // the names added since listed_at that it lacks stay added.
  void ReplaceNames(const std::string& dir, Dir* d,
                    std::shared_ptr<const std::unordered_set<std::string>> names, Time listed_at)
      REQUIRES(mu_);
  // Drops the oldest listings (but `keep`'s) until `n` more names fit in max_total_names.
  void MakeRoom(const std::string& keep, size_t n) REQUIRES(mu_);

  const std::shared_ptr<ObjectStore> store_;
  const Options options_;
  const SteadyClock clock_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Dir> dirs_ GUARDED_BY(mu_);
  uint64_t listings_ GUARDED_BY(mu_) = 0;
  size_t total_names_ GUARDED_BY(mu_) = 0;
  // Every key noted added, newest last, at most kMaxRecentlyAdded: whichever listing is under way
  // when a name arrives (ListDir's, or a lookup's own LIST before RecordListing) may have read its
  // page before the name was stored, and its directory may hold no listing yet to add it to (the
  // feed told of a burst of chunks while the first listing of their directory was in flight: the
  // listing hid them for feed_miss_ttl_secs, issue 47 item 1).
  std::deque<std::pair<Time, std::string>> recently_added_ GUARDED_BY(mu_);
};

}  // namespace kvfs
