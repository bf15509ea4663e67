#include "fs/inode_table.h"

#include <algorithm>

namespace kvfs {

InodeTable::InodeTable() {
  Node root;
  root.is_dir = true;
  root.nlookup = 1;
  nodes_[kRootIno] = root;
}

uint64_t InodeTable::Ref(uint64_t parent, const std::string& name, bool is_dir) {
  MutexLock l(&mu_);
  auto it = by_name_.find({parent, name});
  if (it != by_name_.end()) {
    Node& n = nodes_[it->second];
    n.nlookup++;
    n.is_dir = is_dir;
    return it->second;
  }
  uint64_t ino = next_ino_++;
  Node& n = nodes_[ino];
  n.parent = parent;
  n.name = name;
  n.is_dir = is_dir;
  n.nlookup = 1;
  by_name_[{parent, name}] = ino;
  return ino;
}

void InodeTable::Forget(uint64_t ino, uint64_t count) {
  if (ino == kRootIno) return;
  MutexLock l(&mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end()) return;
  Node& n = it->second;
  n.nlookup -= std::min(n.nlookup, count);
  if (n.nlookup > 0) return;
  if (!n.detached) by_name_.erase({n.parent, n.name});
  for (const auto& link : n.links) by_name_.erase(link);
  nodes_.erase(it);
}

std::optional<std::vector<std::string>> InodeTable::Path(uint64_t ino) const {
  MutexLock l(&mu_);
  std::vector<std::string> names;
  while (ino != kRootIno) {
    auto it = nodes_.find(ino);
    if (it == nodes_.end() || it->second.detached) return std::nullopt;
    names.push_back(it->second.name);
    ino = it->second.parent;
  }
  std::reverse(names.begin(), names.end());
  return names;
}

std::optional<uint64_t> InodeTable::Find(uint64_t parent, const std::string& name) const {
  MutexLock l(&mu_);
  auto it = by_name_.find({parent, name});
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

bool InodeTable::IsDir(uint64_t ino) const {
  MutexLock l(&mu_);
  auto it = nodes_.find(ino);
  return it != nodes_.end() && it->second.is_dir;
}

uint64_t InodeTable::ParentOf(uint64_t ino) const {
  MutexLock l(&mu_);
  auto it = nodes_.find(ino);
  return it == nodes_.end() ? 0 : it->second.parent;
}

void InodeTable::DropNameLocked(std::map<NameKey, uint64_t>::iterator it) {
  Node& n = nodes_[it->second];
  if (n.parent == it->first.first && n.name == it->first.second) {
    if (n.links.empty()) {
      n.detached = true;
    } else {  // the next name becomes the path
      n.parent = n.links.front().first;
      n.name = n.links.front().second;
      n.links.erase(n.links.begin());
    }
  } else {
    n.links.erase(std::remove(n.links.begin(), n.links.end(), it->first), n.links.end());
  }
}

void InodeTable::Detach(uint64_t parent, const std::string& name) {
  MutexLock l(&mu_);
  auto it = by_name_.find({parent, name});
  if (it == by_name_.end()) return;
  DropNameLocked(it);
  by_name_.erase(it);
}

void InodeTable::Move(uint64_t parent, const std::string& name, uint64_t new_parent,
                      const std::string& new_name) {
  MutexLock l(&mu_);
  if (parent == new_parent && name == new_name) return;
  auto it = by_name_.find({parent, name});
  auto target = by_name_.find({new_parent, new_name});
  if (target != by_name_.end()) {
    if (it != by_name_.end() && target->second == it->second) {
      // Two names of one inode: the target keeps it, the old name goes.
      DropNameLocked(it);
      by_name_.erase(it);
      return;
    }
    DropNameLocked(target);
    by_name_.erase(target);
  }
  if (it == by_name_.end()) return;
  const uint64_t ino = it->second;
  Node& n = nodes_[ino];
  if (n.parent == parent && n.name == name) {
    n.parent = new_parent;
    n.name = new_name;
  } else {
    std::replace(n.links.begin(), n.links.end(), it->first, NameKey{new_parent, new_name});
  }
  by_name_.erase(it);
  by_name_[{new_parent, new_name}] = ino;
}

bool InodeTable::Link(uint64_t ino, uint64_t parent, const std::string& name) {
  MutexLock l(&mu_);
  auto nit = nodes_.find(ino);
  if (nit == nodes_.end() || ino == kRootIno) return false;
  auto target = by_name_.find({parent, name});
  if (target != by_name_.end()) {
    if (target->second == ino) {
      nit->second.nlookup++;
      return true;
    }
    DropNameLocked(target);
    by_name_.erase(target);
  }
  Node& n = nit->second;
  if (n.detached) {  // its last name went: this one is its path now
    n.parent = parent;
    n.name = name;
    n.detached = false;
  } else {
    n.links.emplace_back(parent, name);
  }
  n.nlookup++;
  by_name_[{parent, name}] = ino;
  return true;
}

uint32_t InodeTable::Names(uint64_t ino) const {
  MutexLock l(&mu_);
  auto it = nodes_.find(ino);
  if (it == nodes_.end() || it->second.detached) return 0;
  return 1 + static_cast<uint32_t>(it->second.links.size());
}

size_t InodeTable::size() const {
  MutexLock l(&mu_);
  return nodes_.size();
}

}  // namespace kvfs
