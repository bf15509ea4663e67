// The open file and directory handles of one mount.
#include "fs/handle_table.h"

namespace kvfs {

namespace {

template <typename T>
using HandleMap = std::unordered_map<uint64_t, std::shared_ptr<T>>;

template <typename T>
std::shared_ptr<T> Find(const HandleMap<T>& m, uint64_t fh) {
  auto it = m.find(fh);
  return it == m.end() ? nullptr : it->second;
}

// Removes `fh` from `m` and returns what it held (null if nothing).
template <typename T>
std::shared_ptr<T> Take(HandleMap<T>* m, uint64_t fh) {
  auto it = m->find(fh);
  if (it == m->end()) return nullptr;
  std::shared_ptr<T> v = std::move(it->second);
  m->erase(it);
  return v;
}

Status BadFile() { return Status::InvalidArgument("bad file handle"); }

}  // namespace

uint64_t HandleTable::AddFile(std::shared_ptr<FileHandle> h) {
  MutexLock l(&mu_);
  files_[next_fh_] = std::move(h);
  return next_fh_++;
}

Result<std::shared_ptr<FileHandle>> HandleTable::File(uint64_t fh) const {
  MutexLock l(&mu_);
  std::shared_ptr<FileHandle> h = Find(files_, fh);
  if (!h) return BadFile();
  return h;
}

Result<std::shared_ptr<FileHandle>> HandleTable::TakeFile(uint64_t fh) {
  MutexLock l(&mu_);
  std::shared_ptr<FileHandle> h = Take(&files_, fh);
  if (!h) return BadFile();
  return h;
}

std::vector<std::shared_ptr<FileHandle>> HandleTable::FilesOf(uint64_t ino) const {
  std::vector<std::shared_ptr<FileHandle>> out;
  MutexLock l(&mu_);
  for (const auto& [fh, h] : files_) {
    if (h->ino == ino) out.push_back(h);
  }
  return out;
}

uint64_t HandleTable::AddDir(std::shared_ptr<DirStream> d) {
  MutexLock l(&mu_);
  dirs_[next_fh_] = std::move(d);
  return next_fh_++;
}

Result<std::shared_ptr<DirStream>> HandleTable::Dir(uint64_t fh) const {
  MutexLock l(&mu_);
  std::shared_ptr<DirStream> d = Find(dirs_, fh);
  if (!d) return Status::InvalidArgument("bad directory handle");
  return d;
}

std::shared_ptr<DirStream> HandleTable::TakeDir(uint64_t fh) {
  MutexLock l(&mu_);
  return Take(&dirs_, fh);
}

std::vector<std::shared_ptr<DirStream>> HandleTable::Dirs() const {
  std::vector<std::shared_ptr<DirStream>> out;
  MutexLock l(&mu_);
  for (const auto& [fh, d] : dirs_) out.push_back(d);
  return out;
}

}  // namespace kvfs
