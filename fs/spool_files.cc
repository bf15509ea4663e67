#include "fs/spool_files.h"

namespace kvfs {

std::shared_ptr<SpoolFile> SpoolFiles::Find(const std::string& key) const {
  MutexLock l(&mu_);
  auto it = files_.find(key);
  return it == files_.end() ? nullptr : it->second;
}

std::shared_ptr<SpoolFile> SpoolFiles::Put(const std::string& key, std::shared_ptr<SpoolFile> f) {
  MutexLock l(&mu_);
  std::shared_ptr<SpoolFile>& slot = files_[key];
  std::swap(slot, f);
  return f;
}

bool SpoolFiles::PutIfAbsent(const std::string& key, std::shared_ptr<SpoolFile> f) {
  MutexLock l(&mu_);
  return files_.emplace(key, std::move(f)).second;
}

std::shared_ptr<SpoolFile> SpoolFiles::Take(const std::string& key) {
  MutexLock l(&mu_);
  auto it = files_.find(key);
  if (it == files_.end()) return nullptr;
  std::shared_ptr<SpoolFile> f = std::move(it->second);
  files_.erase(it);
  return f;
}

void SpoolFiles::EraseIf(const std::string& key, const SpoolFile* self) {
  MutexLock l(&mu_);
  auto it = files_.find(key);
  if (it != files_.end() && it->second.get() == self) files_.erase(it);
}

std::vector<std::string> SpoolFiles::KeysWithPrefix(const std::string& prefix) const {
  MutexLock l(&mu_);
  std::vector<std::string> keys;
  for (const auto& [key, f] : files_) {
    if (key.compare(0, prefix.size(), prefix) == 0) keys.push_back(key);
  }
  return keys;
}

size_t SpoolFiles::size() const {
  MutexLock l(&mu_);
  return files_.size();
}

}  // namespace kvfs
