// Filesystem directory operations: readdir (paged listing merged with local files and
// directories), mkdir (local until a file under it is uploaded: LocalDirs) and rmdir, unlink
// (policy) and rename (temp upload or server-side copy).
#include <linux/fs.h>  // RENAME_NOREPLACE, RENAME_EXCHANGE
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <unordered_set>

#include "fs/filesystem.h"
#include "fs/list_loop_guard.h"

namespace kvfs {

namespace {

// d_ino for names the kernel has not looked up yet: stable, and outside the range of real
// inode numbers (which count up from 1).
uint64_t SyntheticIno(const std::string& name) {
  return (std::hash<std::string>{}(name) | (1ull << 63));
}

}  // namespace

Result<uint64_t> Filesystem::OpenDir(uint64_t ino, pid_t pid) {
  KVFS_ASSIGN_OR_RETURN(auto path, PathOf(ino));
  KVFS_ASSIGN_OR_RETURN(std::string prefix, codec_.DirPrefix(path));
  // The head: ".", "..", then the chunks this node is writing here that are not in the store yet
  // (as many as files are open for writing: bounded by the spool, not by the directory).
  std::vector<DirEntry> head;
  head.push_back({".", ino, true});
  head.push_back({"..", ino == kRootIno ? kRootIno : inodes_.ParentOf(ino), true});
  auto local = std::make_shared<std::unordered_set<std::string>>();
  for (const std::string& key : local_files_.KeysWithPrefix(prefix)) {
    // A chunk another process is writing is not listed until it is published.
    auto lf = local_files_.Find(key);
    if (lf && !VisibleTo(*lf, pid)) continue;
    auto name = codec_.NameOfKey(prefix, key);
    if (!name || !local->insert(*name).second) continue;
    auto known = inodes_.Find(ino, *name);
    head.push_back({*name, known ? *known : SyntheticIno(prefix + *name), false});
  }
  auto stream = std::make_shared<DirStream>(
      std::move(head),
      [this, ino, prefix, local](DirStream::Cursor* c, std::vector<DirEntry>* out) {
        return NextDirPage(ino, prefix, *local, c, out);
      });
  KVFS_RETURN_IF_ERROR(stream->Start());
  return handles_.AddDir(std::move(stream));
}

Status Filesystem::NextDirPage(uint64_t ino, const std::string& prefix,
                               const std::unordered_set<std::string>& local, DirStream::Cursor* c,
                               std::vector<DirEntry>* out) {
  if (!c->guard) c->guard = std::make_unique<ListLoopGuard>("listing " + prefix);
  KVFS_RETURN_IF_ERROR(c->guard->BeforePage(c->token));
  ListRequest req;
  req.prefix = prefix;
  // With fan-out the root's files lie one level down: list flat and take the valid keys.
  req.delimiter = codec_.flat() ? "" : "/";
  req.continuation_token = c->token;
  auto page = store_->List(req);
  if (!page.ok()) return page.status().Annotate("listing " + prefix);
  const auto& objects = page->objects;
  static const std::vector<std::string> kNone;
  const auto& prefixes = options_.subdirectories ? page->common_prefixes : kNone;
  for (auto& f : c->open_files) f.second = -1;  // from an earlier page now
  auto add = [&](const std::string& name, bool is_dir) {
    auto known = inodes_.Find(ino, name);
    out->push_back({name, known ? *known : SyntheticIno(prefix + name), is_dir});
    ++c->names;
  };
  // Objects and directories ("d/") merged in the store's ascending key order, so that a file "d"
  // and a directory "d/" of one name meet while the file is still in `open_files`: the name is
  // shown once (as the directory, or as the file if the file came on an earlier page).
  size_t oi = 0, pi = 0;
  while (oi < objects.size() || pi < prefixes.size()) {
    const bool is_obj =
        pi == prefixes.size() || (oi < objects.size() && objects[oi].key < prefixes[pi]);
    const std::string& pos = is_obj ? objects[oi++].key : prefixes[pi++];
    if (!c->last_key.empty() && pos <= c->last_key) continue;  // seen before
    c->last_key = pos;
    // A file "f" can still meet its directory only while keys start with "f" and a byte <= '/'.
    std::erase_if(c->open_files, [&](const auto& f) {
      return !(pos.size() > f.first.size() && pos.compare(0, f.first.size(), f.first) == 0 &&
               pos[f.first.size()] <= '/');
    });
    if (is_obj) {
      const ObjectInfo& obj = objects[oi - 1];
      auto name = codec_.NameOfKey(prefix, obj.key);
      if (!name) continue;  // a marker or a key that is not a valid encoded name: hidden
      if (unlinked_.Hides(obj)) continue;  // unlinked on this node (unlink_policy local)
      meta_.PutFile(obj);                  // scandir + stat then costs no request
      learnt_sizes_.Observe(obj.key, obj.size);
      if (local.count(*name)) continue;  // in the head already
      add(*name, false);
      c->open_files.emplace_back(obj.key, static_cast<long>(out->size()) - 1);
      continue;
    }
    auto name = codec_.NameOfPrefix(prefix, pos);
    if (!name) continue;
    const std::string dir_key = pos.substr(0, pos.size() - 1);
    meta_.PutDir(dir_key);
    listings_.NoteChild(dir_key, /*is_dir=*/true);
    if (local.count(*name)) continue;
    auto file = std::find_if(c->open_files.begin(), c->open_files.end(),
                             [&](const auto& f) { return f.first == dir_key; });
    if (file == c->open_files.end()) {
      add(*name, true);
    } else if (file->second >= 0) {
      (*out)[file->second].is_dir = true;
    }
  }
  KVFS_RETURN_IF_ERROR(c->guard->AfterPage(c->names, page->truncated));
  if (page->truncated && page->next_continuation_token.empty()) {
    return Status::IoError("listing " + prefix + ": a truncated page without a continuation token");
  }
  c->token = page->truncated ? page->next_continuation_token : "";
  c->done = !page->truncated;
  return Status::OK();
}

Status Filesystem::ReadDir(uint64_t dir_fh, uint64_t offset, const DirStream::Visitor& add) {
  KVFS_ASSIGN_OR_RETURN(std::shared_ptr<DirStream> stream, handles_.Dir(dir_fh));
  return stream->Read(offset, add);
}

void Filesystem::ReleaseDir(uint64_t dir_fh) {
  // Freed outside the table's mutex (or by a read still using it).
  handles_.TakeDir(dir_fh);
}

size_t Filesystem::DirHandleBytes() const {
  size_t n = 0;
  for (const auto& s : handles_.Dirs()) n += s->bytes();
  return n;
}

Result<FsEntry> Filesystem::Mkdir(uint64_t parent, const std::string& name) {
  if (codec_.flat() || !options_.subdirectories) {
    return Status::NotSupported("mkdir: subdirectories are off (fan-out or subdirectories: false)");
  }
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  // The kernel looked the name up just before: this is answered from the metadata cache.
  auto node = Resolve(key);
  if (node.ok()) return Status::AlreadyExists("mkdir: exists: " + Display(path));
  if (node.status().code() != StatusCode::kNotFound) return node.status();
  // A marker object ("name/", empty: the convention of s3fs, rclone and the S3 console) makes
  // the directory exist for every node until rmdir, whether or not files are under it: engines
  // make their tier's directory once at start-up and must still be able to store into it after
  // every chunk in it was removed (by any node). One PUT per directory made; lookups of names
  // under it ask the store, as on every other node (no empty listing is assumed).
  PutOptions opts;
  opts.if_none_match = true;
  auto put = store_->Put(key + "/", Body::FromMemory("", 0), opts);
  if (!put.ok() && put.status().code() != StatusCode::kAlreadyExists) {
    return put.status().Annotate("mkdir " + Display(path));
  }
  meta_.PutDir(key);
  listings_.NoteChild(key, /*is_dir=*/true);
  listings_.NoteAdded(key);
  // Made just now (not another node's): nothing is under it, so the walks of the levels below
  // (mkdir -p) cost nothing.
  if (put.ok()) listings_.RecordEmpty(key + "/");
  Announce(FeedEvent::kStored, key + "/", put.ok() ? put->etag : "");
  uint64_t ino = inodes_.Ref(parent, name, true);
  return FsEntry{DirAttr(ino)};
}

Status Filesystem::Rmdir(uint64_t parent, const std::string& name) {
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string prefix, codec_.DirPrefix(path));
  const std::string dir_key = prefix.substr(0, prefix.size() - 1);
  // rmdir(2) allows EEXIST for a non-empty directory (errno map: kAlreadyExists -> EEXIST).
  if (!local_files_.KeysWithPrefix(prefix).empty()) {
    return Status::AlreadyExists("rmdir: directory not empty: " + Display(path));
  }
  // Empty on this node: nothing under it but its marker and names this node unlinked (under
  // unlink_policy local their objects stay for the other nodes, who still see the directory).
  ListRequest req;
  req.prefix = prefix;
  req.max_keys = 1000;
  ListLoopGuard guard("rmdir '" + prefix + "'");
  size_t seen = 0;
  do {
    KVFS_RETURN_IF_ERROR(guard.BeforePage(req.continuation_token));
    KVFS_ASSIGN_OR_RETURN(ListResult lr, store_->List(req));
    for (const auto& o : lr.objects) {
      if (o.key != prefix && !unlinked_.Hides(o)) {
        return Status::AlreadyExists("rmdir: directory not empty: " + Display(path));
      }
    }
    seen += lr.objects.size();
    KVFS_RETURN_IF_ERROR(guard.AfterPage(seen, lr.truncated));
    req.continuation_token = lr.truncated ? lr.next_continuation_token : "";
  } while (!req.continuation_token.empty());
  // Its marker (mkdir's, or another tool's); deleting an absent key succeeds.
  KVFS_RETURN_IF_ERROR(store_->Delete(prefix));
  Announce(FeedEvent::kRemoved, prefix);
  meta_.PutMissing(dir_key);
  inodes_.Detach(parent, name);
  return Status::OK();
}

Status Filesystem::Unlink(uint64_t parent, const std::string& name) {
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  // deny refuses before anything is dropped: a chunk being written is a chunk too, and its
  // writer's close must still publish it. Temp files are local, never shared: still removable.
  if (options_.unlink_policy == UnlinkPolicy::kDeny) {
    if (auto open = local_files_.Find(key); open && !open->temp_now()) {
      return Status::PermissionDenied("unlink denied by unlink_policy: " + Display(path));
    }
  }
  std::shared_ptr<LocalFile> lf = local_files_.Take(key);
  // Open handles keep their bytes, but nothing is uploaded any more.
  const bool was_temp = lf && lf->Discard();
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
    case UnlinkPolicy::kLocal: {
      // The object, shared with other nodes, stays; on this node the name goes with its cached
      // copy (an engine that deleted a chunk must not find it again at its next lookup), until
      // the object changes or this node stores that name again (UnlinkedNames).
      ObjectInfo gone = node->info;
      gone.key = key;
      unlinked_.Hide(gone);
      reader_->Invalidate(key);
      meta_.PutMissing(key);
      break;
    }
    case UnlinkPolicy::kRemote: {
      if (auto ino = inodes_.Find(parent, name)) KeepOpenLocal(*ino);
      KVFS_RETURN_IF_ERROR(store_->Delete(key));
      reader_->Invalidate(key);
      meta_.PutMissing(key);
      Announce(FeedEvent::kRemoved, key);
      break;
    }
  }
  inodes_.Detach(parent, name);
  return Status::OK();
}

Result<FsEntry> Filesystem::Link(uint64_t ino, uint64_t new_parent, const std::string& new_name) {
  KVFS_ASSIGN_OR_RETURN(auto src_path, PathOf(ino));
  if (src_path.empty() || inodes_.IsDir(ino)) {
    return Status::PermissionDenied("link: directories cannot be linked");
  }
  KVFS_ASSIGN_OR_RETURN(auto dst_path, ChildPath(new_parent, new_name));
  KVFS_ASSIGN_OR_RETURN(std::string src_key, codec_.FileKey(src_path));
  KVFS_ASSIGN_OR_RETURN(std::string dst_key, codec_.FileKey(dst_path));
  if (IsTempName(new_name)) {
    return Status::PermissionDenied("link: a temporary name cannot be a link target: " +
                                    Display(dst_path));
  }
  auto dst = Resolve(dst_key);
  if (dst.ok()) return Status::AlreadyExists("link: target exists: " + Display(dst_path));
  if (dst.status().code() != StatusCode::kNotFound) return dst.status();
  ObjectInfo info;
  if (auto lf = local_files_.Find(src_key)) {
    LocalFile::Place place{dst_key, Display(dst_path), new_parent, new_name};
    LocalFile::Outcome out = lf->LinkTo(place);
    if (out.kind != LocalFile::Outcome::kPublished) return out.status;
    info = std::move(out.info);
  } else {
    KVFS_ASSIGN_OR_RETURN(Node node, Resolve(src_key));
    if (node.kind == MetaEntry::kDir) return Status::PermissionDenied("link: is a directory");
    PutOptions opts;
    opts.if_none_match = true;
    auto copied = store_->Copy(src_key, dst_key, opts);
    if (!copied.ok()) return copied.status().Annotate("link " + Display(src_path));
    info = std::move(copied).value();
    if (info.size == 0) info.size = node.info.size;
  }
  info.key = dst_key;
  Published(info);
  Node node;
  node.kind = MetaEntry::kFile;
  node.info = info;
  uint64_t new_ino = inodes_.Ref(new_parent, new_name, false);
  return FsEntry{AttrOf(new_ino, node)};
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
  if (auto lf = local_files_.Find(src_key)) {
    std::shared_ptr<LocalFile> replaced;
    LocalFile::Place dst{dst_key, Display(dst_path), new_parent, new_name};
    LocalFile::Outcome out =
        lf->RenameTo(std::move(dst), IsTempName(new_name), no_replace,
                     /*wait=*/!options_.write_back, &replaced);
    if (out.kind == LocalFile::Outcome::kRejected || !out.status.ok()) return out.status;
    // The old name's lookups: a temp name's cost nothing (Lookup), another's asks the store (an
    // older object of that name may still be there).
    meta_.Erase(out.place.key);
    if (out.kind == LocalFile::Outcome::kPublished) Published(out.info);
    if (out.kind == LocalFile::Outcome::kQueued) {
      LocalFile::Outcome queued = out;
      queued.place = {};  // the old name is forgotten above; the new one is the file's own
      Apply(queued, lf);
    }
    // A local file that had the target name is gone. Discarded after lf's lock is released:
    // two LocalFile locks are never held at once.
    if (replaced) replaced->Discard();
  } else {
    KVFS_ASSIGN_OR_RETURN(Node node, Resolve(src_key));
    if (node.kind == MetaEntry::kDir) {
      return Status::NotSupported("rename of directories is not supported: " + Display(src_path));
    }
    // An uploaded file: server-side copy, then delete the source.
    static std::atomic<bool> hinted{false};
    if (!hinted.exchange(true)) {
      spdlog::info(
          "kvfs: rename of the uploaded file '{}' costs a server-side copy and a delete; if it is "
          "a temporary name, add a pattern matching it to temp_patterns (shown once)",
          Display(src_path));
    }
    PutOptions opts;
    opts.if_none_match = no_replace;
    auto info = store_->Copy(src_key, dst_key, opts);
    if (!info.ok()) return info.status().Annotate("rename " + Display(src_path));
    KVFS_RETURN_IF_ERROR(store_->Delete(src_key));
    Announce(FeedEvent::kRemoved, src_key);
    info->key = dst_key;
    if (info->size == 0) info->size = node.info.size;
    Published(*info);
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
