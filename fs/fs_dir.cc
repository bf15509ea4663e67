// Filesystem directory operations: readdir (paged listing merged with local files), mkdir and
// rmdir (marker objects "name/"), unlink (policy) and rename (temp upload or server-side copy).
#include <linux/fs.h>  // RENAME_NOREPLACE, RENAME_EXCHANGE
#include <spdlog/spdlog.h>

#include <map>

#include "fs/filesystem.h"

namespace kvfs {

namespace {

// d_ino for names the kernel has not looked up yet: stable, and outside the range of real
// inode numbers (which count up from 1).
uint64_t SyntheticIno(const std::string& name) {
  return (std::hash<std::string>{}(name) | (1ull << 63));
}

}  // namespace

Result<uint64_t> Filesystem::OpenDir(uint64_t ino) {
  KVFS_ASSIGN_OR_RETURN(auto path, PathOf(ino));
  KVFS_ASSIGN_OR_RETURN(std::string prefix, codec_.DirPrefix(path));
  std::map<std::string, bool> names;  // name -> is_dir; sorted and de-duplicated
  ListRequest req;
  req.prefix = prefix;
  // With fan-out the root's files lie one level down: list flat and take the valid keys.
  req.delimiter = codec_.flat() ? "" : "/";
  for (;;) {
    auto page = store_->List(req);
    if (!page.ok()) return page.status().Annotate("listing " + prefix);
    for (auto& obj : page->objects) {
      auto name = codec_.NameOfKey(prefix, obj.key);
      if (!name) continue;  // a marker or a key that is not a valid encoded name: hidden
      names.emplace(*name, false);
      meta_.PutFile(obj);  // scandir + stat then costs no request
    }
    for (auto& cp : page->common_prefixes) {
      if (!options_.subdirectories) break;
      auto name = codec_.NameOfPrefix(prefix, cp);
      if (!name) continue;
      names[*name] = true;
      meta_.PutDir(cp.substr(0, cp.size() - 1));
    }
    if (!page->truncated) break;
    req.continuation_token = page->next_continuation_token;
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [key, lf] : local_files_) {
      if (auto name = codec_.NameOfKey(prefix, key)) names.emplace(*name, false);
    }
  }
  auto entries = std::make_shared<std::vector<DirEntry>>();
  entries->push_back({".", ino, true});
  entries->push_back({"..", ino == kRootIno ? kRootIno : inodes_.ParentOf(ino), true});
  for (const auto& [name, is_dir] : names) {
    auto known = inodes_.Find(ino, name);
    entries->push_back({name, known ? *known : SyntheticIno(prefix + name), is_dir});
  }
  std::lock_guard<std::mutex> l(mu_);
  uint64_t fh = next_fh_++;
  dirs_[fh] = std::move(entries);
  return fh;
}

Result<std::shared_ptr<const std::vector<DirEntry>>> Filesystem::ReadDir(uint64_t dir_fh) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = dirs_.find(dir_fh);
  if (it == dirs_.end()) return Status::InvalidArgument("bad directory handle");
  return it->second;
}

void Filesystem::ReleaseDir(uint64_t dir_fh) {
  std::lock_guard<std::mutex> l(mu_);
  dirs_.erase(dir_fh);
}

Result<FsEntry> Filesystem::Mkdir(uint64_t parent, const std::string& name) {
  if (codec_.flat() || !options_.subdirectories) {
    return Status::NotSupported("mkdir: subdirectories are off (fan-out or subdirectories: false)");
  }
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  auto node = Resolve(key);
  if (node.ok()) return Status::AlreadyExists("mkdir: exists: " + Display(path));
  if (node.status().code() != StatusCode::kNotFound) return node.status();
  PutOptions opts;
  opts.if_none_match = options_.conditional_create;
  auto put = store_->Put(key + "/", Body::FromMemory("", 0), opts);
  if (!put.ok() && put.status().code() == StatusCode::kAlreadyExists) {
    // A marker already exists (another node made the directory): that is the same directory -
    // unless the server refused a new key (RGW), then write it plainly.
    if (store_->Head(key + "/").status().code() == StatusCode::kNotFound) {
      put = store_->Put(key + "/", Body::FromMemory("", 0), PutOptions{});
    } else {
      return Status::AlreadyExists("mkdir: exists: " + Display(path));
    }
  }
  if (!put.ok()) return put.status().Annotate("mkdir " + Display(path));
  meta_.PutDir(key);
  uint64_t ino = inodes_.Ref(parent, name, true);
  return FsEntry{DirAttr(ino)};
}

Status Filesystem::Rmdir(uint64_t parent, const std::string& name) {
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string prefix, codec_.DirPrefix(path));
  ListRequest req;
  req.prefix = prefix;
  req.max_keys = 2;
  KVFS_ASSIGN_OR_RETURN(ListResult lr, store_->List(req));
  bool empty = lr.common_prefixes.empty();
  for (const auto& o : lr.objects) empty = empty && o.key == prefix;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [key, lf] : local_files_) {
      if (key.compare(0, prefix.size(), prefix) == 0) empty = false;
    }
  }
  // rmdir(2) allows EEXIST for a non-empty directory (errno map: kAlreadyExists -> EEXIST).
  if (!empty) return Status::AlreadyExists("rmdir: directory not empty: " + Display(path));
  KVFS_RETURN_IF_ERROR(store_->Delete(prefix));
  meta_.PutMissing(prefix.substr(0, prefix.size() - 1));
  inodes_.Detach(parent, name);
  return Status::OK();
}

Status Filesystem::Unlink(uint64_t parent, const std::string& name) {
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  std::shared_ptr<LocalFile> lf;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = local_files_.find(key);
    if (it != local_files_.end()) {
      lf = it->second;
      local_files_.erase(it);
    }
  }
  bool was_temp = false;
  if (lf) {
    std::lock_guard<std::mutex> l(lf->mu);
    lf->unlinked = true;  // open handles keep their bytes, but nothing is uploaded any more
    was_temp = lf->temp;
  }
  if (was_temp) {  // local only: nothing remote to remove
    inodes_.Detach(parent, name);
    return Status::OK();
  }
  auto node = Resolve(key);
  if (!node.ok()) {
    // A write in progress that never reached the store: dropping it was the whole unlink.
    if (lf && node.status().code() == StatusCode::kNotFound) {
      inodes_.Detach(parent, name);
      return Status::OK();
    }
    return node.status();
  }
  if (node->kind == MetaEntry::kDir) return Status::InvalidArgument("unlink: is a directory");
  switch (options_.unlink_policy) {
    case UnlinkPolicy::kDeny:
      return Status::PermissionDenied("unlink denied by unlink_policy: " + Display(path));
    case UnlinkPolicy::kLocal:
      // Only this node's copy goes; the object, shared with other nodes, stays.
      reader_->Invalidate(key);
      break;
    case UnlinkPolicy::kRemote:
      KVFS_RETURN_IF_ERROR(store_->Delete(key));
      reader_->Invalidate(key);
      meta_.PutMissing(key);
      break;
  }
  inodes_.Detach(parent, name);
  return Status::OK();
}

Status Filesystem::RenameLocalLocked(LocalFile& f, const std::shared_ptr<LocalFile>& self,
                                     const std::string& dst_key, const std::string& dst_display,
                                     bool dst_temp, bool no_replace,
                                     std::shared_ptr<LocalFile>* replaced_out) {
  if (!f.failed.ok()) return f.failed;
  if (!dst_temp) {
    // Upload under the final name; the rename returns only when the object is durable. On
    // failure the source stays as it was (POSIX: a failed rename changes nothing).
    KVFS_RETURN_IF_ERROR(ValidateChunk(f.size, dst_display));
    auto info = uploader_.Upload(dst_key, f.fd(), f.size, dst_display, no_replace);
    if (!info.ok()) {
      spdlog::warn("kvfs: rename of '{}' to '{}': {}", f.display_name, dst_display,
                   info.status().ToString());
      return info.status();
    }
    info->key = dst_key;
    f.uploaded = *info;
    f.dirty = false;
    meta_.PutFile(*info);
  }
  std::shared_ptr<LocalFile> replaced;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = local_files_.find(f.key);
    if (it != local_files_.end() && it->second == self) local_files_.erase(it);
    auto dst = local_files_.find(dst_key);
    if (dst != local_files_.end()) {
      replaced = dst->second;
      local_files_.erase(dst);
    }
    if (dst_temp || f.handles > 0) local_files_[dst_key] = self;
  }
  meta_.Erase(f.key);
  f.key = dst_key;
  f.display_name = dst_display;
  f.SetTempLocked(dst_temp);
  if (replaced.get() != &f) *replaced_out = std::move(replaced);
  if (!dst_temp && f.handles == 0) {
    f.adopted = reader_->AdoptWritten(f.key, *f.uploaded, f.spool_path());
  }
  return Status::OK();
}

Status Filesystem::Rename(uint64_t parent, const std::string& name, uint64_t new_parent,
                          const std::string& new_name, unsigned int flags) {
  if (flags & RENAME_EXCHANGE) return Status::NotSupported("rename: RENAME_EXCHANGE");
  if (flags & ~static_cast<unsigned int>(RENAME_NOREPLACE)) {
    return Status::InvalidArgument("rename: unsupported flags");
  }
  const bool no_replace = flags & RENAME_NOREPLACE;
  KVFS_ASSIGN_OR_RETURN(auto src_path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(auto dst_path, ChildPath(new_parent, new_name));
  KVFS_ASSIGN_OR_RETURN(std::string src_key, codec_.FileKey(src_path));
  KVFS_ASSIGN_OR_RETURN(std::string dst_key, codec_.FileKey(dst_path));
  if (src_key == dst_key) return Status::OK();
  if (no_replace) {
    auto dst = Resolve(dst_key);
    if (dst.ok()) return Status::AlreadyExists("rename: target exists: " + Display(dst_path));
    if (dst.status().code() != StatusCode::kNotFound) return dst.status();
  }
  auto src_ino = inodes_.Find(parent, name);
  if (auto lf = FindLocal(src_key)) {
    std::shared_ptr<LocalFile> replaced;
    {
      std::lock_guard<std::mutex> l(lf->mu);
      KVFS_RETURN_IF_ERROR(RenameLocalLocked(*lf, lf, dst_key, Display(dst_path),
                                             IsTempName(new_name), no_replace, &replaced));
      lf->parent_ino = new_parent;
      lf->name = new_name;
    }
    if (replaced) {
      // A local file that had the target name is gone. Marked after lf->mu is released: two
      // LocalFile locks are never held at once.
      std::lock_guard<std::mutex> l(replaced->mu);
      replaced->unlinked = true;
    }
  } else {
    KVFS_ASSIGN_OR_RETURN(Node node, Resolve(src_key));
    if (node.kind == MetaEntry::kDir) {
      return Status::NotSupported("rename of directories is not supported: " + Display(src_path));
    }
    // An uploaded file: server-side copy, then delete the source.
    PutOptions opts;
    opts.if_none_match = no_replace;
    auto info = store_->Copy(src_key, dst_key, opts);
    if (!info.ok()) return info.status().Annotate("rename " + Display(src_path));
    KVFS_RETURN_IF_ERROR(store_->Delete(src_key));
    info->key = dst_key;
    if (info->size == 0) info->size = node.info.size;
    meta_.PutFile(*info);
    meta_.PutMissing(src_key);
    reader_->Invalidate(src_key);
    reader_->Invalidate(dst_key);
  }
  if (src_ino) {
    inodes_.Move(*src_ino, new_parent, new_name);
  } else {
    inodes_.Detach(new_parent, new_name);
  }
  return Status::OK();
}

}  // namespace kvfs
