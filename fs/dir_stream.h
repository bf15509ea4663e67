// DirStream: the entries of one open directory handle, read by offset, holding at most one page
// of the store's listing. A handle costs O(page) - the names this node is writing in the
// directory, one LIST page (at most 1,000 names) and an 8-byte hash per page read for the loop
// guard - however many names the directory holds; closedir frees it.
//
// Offsets: entry k (0-based: ".", "..", the names this node is writing, then the store's names
// page by page) is followed by offset k+1, which is what the kernel passes back to go on. Going on
// from where the last read stopped (what getdents does) costs one LIST per page; an offset before
// the page held (rewinddir, seekdir back) lists again from the start and skips to it. A name added
// or removed while the handle is open may or may not be shown (POSIX leaves this unspecified);
// every other name is shown exactly once.
//
// Thread-safe: one mutex per stream, held across the LIST of a page (only reads of this handle
// wait for it). Lock order: DirStream::mu_ -> whatever NextPage takes (metadata cache, inode
// table: leaves).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_annotations.h"
#include "fs/list_loop_guard.h"

namespace kvfs {

struct DirEntry {
  std::string name;
  uint64_t ino = 0;
  bool is_dir = false;
};

class DirStream {
 public:
  // Where the listing stands; NextPage advances it. A fresh Cursor starts from the first page.
  struct Cursor {
    std::string token;   // continuation token of the next page ("": the first)
    bool done = false;   // the last page has been read
    uint64_t names = 0;  // names produced so far (the loop guard's measure of progress)
    // The greatest key or prefix seen. Listings ascend, so a key not above it is one seen before
    // (a server that goes back or repeats a page): skipped, and not counted as progress.
    std::string last_key;
    // Files (key, index in the current page or -1 for an earlier page) that a directory of the
    // same name may still follow in key order: it is then shown once. At most one per '/'-free
    // prefix of the current key, so a handful.
    std::vector<std::pair<std::string, long>> open_files;
    std::unique_ptr<ListLoopGuard> guard;
  };
  // Appends the next page's entries to `out` and advances the cursor (done after the last page).
  using NextPage = std::function<Status(Cursor*, std::vector<DirEntry>*)>;
  // Given each entry from the requested offset on and the offset after it; false: stop.
  using Visitor = std::function<bool(const DirEntry&, uint64_t next_offset)>;

  // head: the entries before the store's (".", "..", names being written here).
  DirStream(std::vector<DirEntry> head, NextPage next_page);

  // Reads the first page, so that a failing store fails opendir.
  Status Start() EXCLUDES(mu_);
  // Visits the entries from `offset` on until `add` returns false or the directory ends.
  Status Read(uint64_t offset, const Visitor& add) EXCLUDES(mu_);
  // Memory held (names, entries, cursor), for tests and the stated bound.
  size_t bytes() const EXCLUDES(mu_);

 private:
  Status Advance() REQUIRES(mu_);
  void Restart() REQUIRES(mu_);

  const std::vector<DirEntry> head_;
  const NextPage next_page_;
  mutable Mutex mu_;
  Cursor cursor_ GUARDED_BY(mu_);
  std::vector<DirEntry> window_ GUARDED_BY(mu_);  // the page held
  uint64_t window_start_ GUARDED_BY(mu_) = 0;     // its first entry's index among the store's
};

}  // namespace kvfs
