#include "fs/local_dirs.h"

namespace kvfs {

void LocalDirs::Add(const std::string& dir_key) {
  MutexLock l(&mu_);
  dirs_.insert(dir_key);
}

bool LocalDirs::Contains(const std::string& dir_key) const {
  MutexLock l(&mu_);
  return dirs_.count(dir_key) > 0;
}

void LocalDirs::Erase(const std::string& dir_key) {
  MutexLock l(&mu_);
  dirs_.erase(dir_key);
}

std::vector<std::string> LocalDirs::Filled(const std::string& key) {
  std::vector<std::string> left;
  MutexLock l(&mu_);
  if (dirs_.empty()) return left;
  for (size_t slash = key.rfind('/'); slash != std::string::npos && slash > 0;
       slash = key.rfind('/', slash - 1)) {
    std::string dir = key.substr(0, slash);
    if (dirs_.erase(dir) > 0) left.push_back(std::move(dir));
  }
  return left;
}

std::vector<std::string> LocalDirs::ChildrenOf(const std::string& prefix) const {
  std::vector<std::string> out;
  MutexLock l(&mu_);
  for (const std::string& d : dirs_) {
    if (d.size() > prefix.size() && d.compare(0, prefix.size(), prefix) == 0 &&
        d.find('/', prefix.size()) == std::string::npos) {
      out.push_back(d);
    }
  }
  return out;
}

bool LocalDirs::AnyUnder(const std::string& prefix) const {
  MutexLock l(&mu_);
  for (const std::string& d : dirs_) {
    if (d.size() > prefix.size() && d.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

size_t LocalDirs::size() const {
  MutexLock l(&mu_);
  return dirs_.size();
}

}  // namespace kvfs
