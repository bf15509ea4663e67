// One page of the directory store's listing (objstore/dir/dir_store.h): the keys (and common
// prefixes) after a point, in ascending byte order, read from the objects tree of either layout
// (objstore/dir/dir_key_codec.h).
//
// What a page costs: the walk starts in the directory of the prefix's whole segments (tree
// layout: a listing of "p/~kvfs-feed/" reads objects/p=/~kvfs-feed=/ only, never the chunks of
// objects/p=/), skips every subtree that holds only keys outside the prefix or not after the
// continuation point, and stops once it has the page: it reads the directories on the way to the
// page's keys, orders only as many of a directory's entries as the page needs (a partial sort,
// not a sort of the directory), and checks the canonical path of the keys it returns, not of every
// name it reads. A directory of N names still costs one readdir of N entries per page - an
// unsorted directory cannot be read from a point.
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

  // Reads one directory's entries, keeping those that can hold keys of the page.
  Status ReadEntries(const std::string& dir, const std::string& key_so_far,
                     std::vector<Entry>* out);
  bool WantFile(const std::string& key) const;
  bool WantDir(const std::string& s) const;
  Status WalkDir(const std::string& dir, const std::string& rel, const std::string& key_so_far);
  // Adds a key or a prefix unless it repeats the last prefix; false once the page is full.
  void Add(WalkItem item);
  bool Full() const { return items_.size() >= bounds_.limit; }

  const std::string objects_dir_;
  const KeyLayout layout_;
  const WalkBounds bounds_;
  std::vector<WalkItem> items_;
  size_t names_read_ = 0;
};

}  // namespace kvfs::dirstore
