// ListLoopGuard: stops a paged LIST whose server never lets it end, for every loop over the pages
// of one listing (readdir, the directory listing cache). Two signs, as no page limit would do for
// a prefix with millions of keys: a continuation token seen before (the listing went back), or
// kMaxStuckPages pages in a row that brought no new name (it goes on without going anywhere).
//
// Memory: ~32 bytes per page (a 64-bit hash of each token, not the token: a readdir handle holds
// its guard while open). A hash collision (chance ~n^2/2^65 for n pages: 3e-14 for a million
// names) would fail that listing with EIO; it can never make one loop.
//
// Not thread-safe: one guard per listing, used by the thread that pages through it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_set>

#include "base/status.h"

namespace kvfs {

class ListLoopGuard {
 public:
  // Real listings may have a few pages without new names (RGW can return empty truncated pages);
  // this many in a row means the server's paging is broken.
  static constexpr int kMaxStuckPages = 100;

  explicit ListLoopGuard(std::string what) : what_(std::move(what)) {}

  // Before requesting the page of `token` ("" for the first).
  Status BeforePage(const std::string& token) {
    if (!token.empty() && !tokens_.insert(std::hash<std::string>{}(token)).second) {
      return Status::IoError(what_ +
                             ": the store's continuation tokens repeat (a pagination loop)");
    }
    return Status::OK();
  }

  // After a page: `names_now` is the number of distinct names gathered so far.
  Status AfterPage(size_t names_now, bool truncated) {
    stuck_pages_ = names_now == names_before_ ? stuck_pages_ + 1 : 0;
    names_before_ = names_now;
    if (truncated && stuck_pages_ >= kMaxStuckPages) {
      return Status::IoError(what_ + ": " + std::to_string(stuck_pages_) +
                             " pages in a row brought no new key (a listing that never ends)");
    }
    return Status::OK();
  }

  // Memory held, roughly (hash table nodes and buckets).
  size_t bytes() const { return sizeof(*this) + tokens_.size() * 32 + what_.capacity(); }

 private:
  const std::string what_;
  std::unordered_set<size_t> tokens_;  // hashes of the tokens seen
  size_t names_before_ = 0;
  int stuck_pages_ = 0;
};

}  // namespace kvfs
