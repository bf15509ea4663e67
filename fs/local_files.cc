#include "fs/local_files.h"

namespace kvfs {

std::shared_ptr<LocalFile> LocalFiles::Find(const std::string& key) const {
  MutexLock l(&mu_);
  auto it = files_.find(key);
  return it == files_.end() ? nullptr : it->second;
}

std::shared_ptr<LocalFile> LocalFiles::Put(const std::string& key, std::shared_ptr<LocalFile> f) {
  MutexLock l(&mu_);
  std::shared_ptr<LocalFile>& slot = files_[key];
  std::swap(slot, f);
  return f;
}

std::shared_ptr<LocalFile> LocalFiles::Take(const std::string& key) {
  MutexLock l(&mu_);
  auto it = files_.find(key);
  if (it == files_.end()) return nullptr;
  std::shared_ptr<LocalFile> f = std::move(it->second);
  files_.erase(it);
  return f;
}

void LocalFiles::EraseIf(const std::string& key, const LocalFile* self) {
  MutexLock l(&mu_);
  auto it = files_.find(key);
  if (it != files_.end() && it->second.get() == self) files_.erase(it);
}

std::vector<std::string> LocalFiles::KeysWithPrefix(const std::string& prefix) const {
  MutexLock l(&mu_);
  std::vector<std::string> keys;
  for (const auto& [key, f] : files_) {
    if (key.compare(0, prefix.size(), prefix) == 0) keys.push_back(key);
  }
  return keys;
}

size_t LocalFiles::size() const {
  MutexLock l(&mu_);
  return files_.size();
}

}  // namespace kvfs
