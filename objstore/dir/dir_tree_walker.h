// One page of the directory store's listing (objstore/dir/dir_store.h): the keys (and common
// prefixes) after a point, in ascending byte order, read from the objects tree of either layout
// (objstore/dir/dir_key_codec.h).
//
// What a page costs: the walk starts in the directory of the prefix's whole segments (tree
// layout: a listing of "p/~kvfs-feed/" reads objects/p=/~kvfs-feed=/ only, never the chunks of
// objects/p=/), skips every subtree that holds only keys outside the prefix or not after the
// continuation point, and stops once it has the page. Of each directory it reads, it keeps only
// the entries the page can still use (a bounded heap of at most the page's size, so memory does
// not grow with the directory) and checks the canonical path of the keys it returns only. A
// directory of N names still costs one readdir of N entries per page - an unsorted directory
// cannot be read from a point (bench/RESULTS-dir-list.md).
// Not thread-safe: one walk, on one thread.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "objstore/dir/dir_key_codec.h"

namespace kvfs::dirstore {

struct WalkBounds {
  std::string prefix;
  std::string delimiter;  // empty: no common prefixes
  // The continuation point: only keys after `after` (and none under it when after_is_prefix).
  bool has_after = false;
  std::string after;
  bool after_is_prefix = false;
  size_t limit = 0;  // items wanted
};

struct WalkItem {
  std::string key;  // a key, or a common prefix when is_prefix
  bool is_prefix = false;
  std::string path;  // the key's file (keys only)
};

class DirTreeWalker {
 public:
  DirTreeWalker(std::string objects_dir, KeyLayout layout, WalkBounds bounds);

  // Up to bounds.limit items in key order; a directory that vanishes meanwhile holds nothing.
  Result<std::vector<WalkItem>> Walk();
  // Directory entries the walk read (what a page cost).
  size_t names_read() const { return names_read_; }

 private:
  struct Entry {
    std::string s;  // the key (a file) or the string every key below it starts with (a directory)
    std::string name;
    bool is_dir = false;
  };
  // What a directory's earlier passes took: entries up to `last` and those starting with `group`
  // (the common prefix the last pass ended on) are done.
  struct Done {
    bool any = false;
    std::string last;
    bool last_is_dir = false;
    std::string group;
  };

  // Reads one directory, keeping the `want` smallest entries that can hold keys of the page and
  // are not done, in order; *more says whether it had to leave some out.
  Status ReadEntries(const std::string& dir, const std::string& key_so_far, size_t want,
                     const Done& done, std::vector<Entry>* out, bool* more);
  bool WantFile(const std::string& key) const;
  bool WantDir(const std::string& s) const;
  Status WalkDir(const std::string& dir, const std::string& rel, const std::string& key_so_far);
  // Adds a key or a prefix unless it repeats the last prefix.
  void Add(WalkItem item);
  bool Full() const { return items_.size() >= bounds_.limit; }

  const std::string objects_dir_;
  const KeyLayout layout_;
  const WalkBounds bounds_;
  std::vector<WalkItem> items_;
  size_t names_read_ = 0;
};

}  // namespace kvfs::dirstore
