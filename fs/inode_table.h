// InodeTable: inode numbers for the names the kernel knows, with the kernel's lookup counts.
//
// Every entry reply (lookup, create, mkdir) adds one reference; forget() drops them; an inode
// whose count reaches zero is removed (the root never is). Inode numbers are never reused, so the
// generation is always 0. An unlinked or renamed-over inode is detached: its number stays valid
// for open handles until forgotten, but it no longer has a path.
//
// link() gives an inode further names (Link): each resolves to the same inode, and its path is
// its first name still there. Unlinking one name leaves the inode with the others.
//
// Thread-safe: one internal mutex (a leaf lock: no other lock is taken while holding it).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace kvfs {

class InodeTable {
 public:
  static constexpr uint64_t kRootIno = 1;

  InodeTable();

  // The inode of `name` in `parent` (created if new) with one more kernel reference.
  uint64_t Ref(uint64_t parent, const std::string& name, bool is_dir) EXCLUDES(mu_);
  // Drops n kernel references.
  void Forget(uint64_t ino, uint64_t n) EXCLUDES(mu_);
  // Names from the root to ino (empty for the root); nullopt for unknown or detached inodes.
  std::optional<std::vector<std::string>> Path(uint64_t ino) const EXCLUDES(mu_);
  std::optional<uint64_t> Find(uint64_t parent, const std::string& name) const EXCLUDES(mu_);
  bool IsDir(uint64_t ino) const EXCLUDES(mu_);
  // The parent directory's inode (0 if unknown).
  uint64_t ParentOf(uint64_t ino) const EXCLUDES(mu_);
  // Removes the name of `name` in `parent` (unlink): its inode keeps its other names, or becomes
  // detached when that was the last.
  void Detach(uint64_t parent, const std::string& name) EXCLUDES(mu_);
  // Gives the inode named `name` in `parent` the name `new_name` in `new_parent` instead,
  // detaching whatever had it (rename); with no inode of that name, just detaches the target.
  void Move(uint64_t parent, const std::string& name, uint64_t new_parent,
            const std::string& new_name) EXCLUDES(mu_);
  // link(): `name` in `parent` becomes one more name of `ino` (detaching whatever had it), with
  // one more kernel reference (the reply is an entry). False when `ino` is unknown.
  bool Link(uint64_t ino, uint64_t parent, const std::string& name) EXCLUDES(mu_);
  // How many names `ino` has now (st_nlink): 0 when detached or unknown.
  uint32_t Names(uint64_t ino) const EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

 private:
  struct Node {
    uint64_t parent = 0;
    std::string name;
    bool is_dir = false;
    bool detached = false;
    uint64_t nlookup = 0;
    std::vector<std::pair<uint64_t, std::string>> links;  // names after the first (link())
  };
  using NameKey = std::pair<uint64_t, std::string>;

  // Drops the name `it` points at from its inode (by_name_ is left to the caller).
  void DropNameLocked(std::map<NameKey, uint64_t>::iterator it) REQUIRES(mu_);

  mutable Mutex mu_;
  std::unordered_map<uint64_t, Node> nodes_ GUARDED_BY(mu_);
  std::map<NameKey, uint64_t> by_name_ GUARDED_BY(mu_);
  uint64_t next_ino_ GUARDED_BY(mu_) = kRootIno + 1;
};

}  // namespace kvfs
