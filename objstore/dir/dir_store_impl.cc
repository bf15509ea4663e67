#include "objstore/dir/dir_store_impl.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <memory>
#include <vector>

#include "base/posix_io.h"
#include "objstore/dir/dir_file_util.h"
#include "objstore/dir/dir_key_codec.h"
#include "objstore/dir/dir_tree_walker.h"

namespace kvfs {
namespace dirstore {
namespace {

constexpr time_t kStaleTempSecs = 3600;
// A concurrent Delete may remove an empty parent directory between our mkdir and rename; that
// many rounds of "create parents, publish" are tried before giving up.
constexpr int kPublishAttempts = 8;
// The contents of <root>/layout (objstore/dir/dir_key_codec.h).
constexpr std::string_view kTreeLayout = "tree\n";
constexpr std::string_view kFlatLayout = "flat\n";

Status MkdirOne(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) return Status::OK();
  return Status::FromErrno(errno, "create directory " + path);
}

Status MkdirAll(const std::string& path) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos == path.size() || path[pos] == '/') {
      KVFS_RETURN_IF_ERROR(MkdirOne(path.substr(0, pos)));
    }
  }
  return Status::OK();
}

std::string Quote(const std::string& key) { return "'" + key + "'"; }

// Reads up to n bytes of the object file; short only at its end (GetSync reports that).
Result<uint64_t> ReadAt(int fd, char* dst, uint64_t n, uint64_t offset, const std::string& key) {
  KVFS_ASSIGN_OR_RETURN(size_t got, PreadFull(fd, dst, n, offset, "read object " + Quote(key)));
  return uint64_t{got};
}

}  // namespace

DirStore::DirStore(std::string root, DirStoreOptions options)
    : root_(std::move(root)),
      objects_dir_(root_ + "/objects"),
      tmp_dir_(root_ + "/tmp"),
      uploads_dir_(root_ + "/uploads"),
      options_(options) {}

Status DirStore::Init() {
  KVFS_RETURN_IF_ERROR(MkdirAll(root_));
  KVFS_RETURN_IF_ERROR(MkdirOne(objects_dir_));
  KVFS_RETURN_IF_ERROR(MkdirOne(tmp_dir_));
  KVFS_RETURN_IF_ERROR(MkdirOne(uploads_dir_));
  KVFS_RETURN_IF_ERROR(ChooseLayout());
  // Temporary files of crashed writers. Only old ones: another process may share the root.
  DIR* d = ::opendir(tmp_dir_.c_str());
  if (d == nullptr) return Status::FromErrno(errno, "open directory " + tmp_dir_);
  time_t now = ::time(nullptr);
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    struct stat st;
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        now - st.st_mtim.tv_sec > kStaleTempSecs) {
      ::unlinkat(::dirfd(d), e->d_name, 0);
    }
  }
  ::closedir(d);
  return Status::OK();
}

Status DirStore::ChooseLayout() {
  const std::string path = root_ + "/layout";
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      FdCloser closer(fd);
      char buf[16] = {};
      KVFS_ASSIGN_OR_RETURN(size_t got, ReadFull(fd, buf, sizeof(buf) - 1, path));
      const std::string_view text(buf, got);
      if (text == kTreeLayout) {
        layout_ = KeyLayout::kTree;
      } else if (text == kFlatLayout) {
        layout_ = KeyLayout::kFlat;
      } else {
        return Status::InvalidArgument(path +
                                       " names an unknown layout (this kvfs knows tree and flat)");
      }
      return Status::OK();
    }
    if (errno != ENOENT) return Status::FromErrno(errno, "open " + path);
    // A root of objects without the file was made by a kvfs before the tree layout.
    bool has_objects = false;
    if (DIR* d = ::opendir(objects_dir_.c_str())) {
      while (dirent* e = ::readdir(d)) {
        if (e->d_name[0] != '.') {
          has_objects = true;
          break;
        }
      }
      ::closedir(d);
    }
    const std::string_view text = has_objects ? kFlatLayout : kTreeLayout;
    KVFS_ASSIGN_OR_RETURN(
        std::string tmp,
        WriteTemp([&](int fd) { return WriteFull(fd, text.data(), text.size(), path); }, path));
    // link() publishes the whole file or fails because another process chose first: read that.
    const int rc = ::link(tmp.c_str(), path.c_str());
    const int err = errno;
    ::unlink(tmp.c_str());
    if (rc != 0 && err != EEXIST) return Status::FromErrno(err, "create " + path);
  }
  return Status::Internal("cannot read the layout of " + Describe() + " from " + path);
}

Status DirStore::CheckAccess() {
  for (const std::string* dir : {&objects_dir_, &tmp_dir_, &uploads_dir_}) {
    if (::access(dir->c_str(), R_OK | W_OK | X_OK) != 0) {
      return Status::FromErrno(errno, "directory store " + Describe() + ": " + *dir);
    }
  }
  return Status::OK();
}

Result<std::string> DirStore::ObjectPath(const std::string& key) const {
  KVFS_ASSIGN_OR_RETURN(auto components, EncodeKey(key, layout_));
  return objects_dir_ + "/" + JoinPath(components);
}

Result<std::string> DirStore::WriteTemp(const std::function<Status(int fd)>& fill,
                                        const std::string& what) {
  char host[64] = "host";
  ::gethostname(host, sizeof(host) - 1);
  std::string path = tmp_dir_ + "/" + host + "." + std::to_string(::getpid()) + "." +
                     std::to_string(temp_seq_.fetch_add(1)) + "." + RandomHex(4);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::FromErrno(errno, "create temporary file for " + what);
  Status st;
  {
    FdCloser closer(fd);
    st = fill(fd);
    if (st.ok() && options_.sync && ::fsync(fd) != 0) {
      st = Status::FromErrno(errno, "fsync temporary file for " + what);
    }
  }
  if (!st.ok()) {
    ::unlink(path.c_str());
    return st;
  }
  return path;
}

Result<ObjectInfo> DirStore::Publish(const std::string& tmp_path, const std::string& key,
                                     const PutOptions& opts) {
  // Whatever happens, the temporary name goes away (after a link it is a second name).
  struct Cleanup {
    const std::string& p;
    ~Cleanup() { ::unlink(p.c_str()); }
  } cleanup{tmp_path};

  struct stat st;
  if (::stat(tmp_path.c_str(), &st) != 0) return Status::FromErrno(errno, "stat " + tmp_path);
  KVFS_ASSIGN_OR_RETURN(auto components, EncodeKey(key, layout_));
  std::string final_path = objects_dir_ + "/" + JoinPath(components);
  std::string parent = objects_dir_;
  for (int attempt = 0;; ++attempt) {
    parent = objects_dir_;
    for (size_t i = 0; i + 1 < components.size(); ++i) {
      parent += "/" + components[i];
      KVFS_RETURN_IF_ERROR(MkdirOne(parent));
    }
    int rc;
    if (!opts.if_match.empty()) {
      KVFS_RETURN_IF_ERROR(ReplaceIfMatch(tmp_path, final_path, key, opts.if_match));
      break;
    }
    if (opts.if_none_match) {
      rc = ::link(tmp_path.c_str(), final_path.c_str());
      if (rc != 0 && (errno == EPERM || errno == ENOTSUP || errno == EMLINK)) {
        // File systems without hard links: the same guarantee from the kernel's rename.
        rc =
            ::renameat2(AT_FDCWD, tmp_path.c_str(), AT_FDCWD, final_path.c_str(), RENAME_NOREPLACE);
      }
      if (rc != 0 && errno == EEXIST) {
        return Status::AlreadyExists("object " + Quote(key) + " already exists in " + Describe());
      }
    } else {
      rc = ::rename(tmp_path.c_str(), final_path.c_str());
    }
    if (rc == 0) break;
    if (errno != ENOENT || attempt + 1 >= kPublishAttempts) {
      return Status::FromErrno(errno, "publish object " + Quote(key) + " in " + Describe());
    }
  }
  if (options_.sync) KVFS_RETURN_IF_ERROR(FsyncDir(parent));
  ObjectInfo info = InfoFromStat(key, st);
  info.crc32c = opts.crc32c;
  if (opts.crc32c && opts.slice_crcs && opts.slice_crcs->Fits(info.size)) {
    info.slice_crcs = opts.slice_crcs;
  }
  info.user_xattrs = opts.user_xattrs;
  return info;
}

Status DirStore::ReplaceIfMatch(const std::string& tmp_path, const std::string& final_path,
                                const std::string& key, const std::string& if_match) {
  // Exact If-Match, as in Delete: the version under the key is moved aside in one rename (which
  // keeps its inode and mtime, so its ETag) and compared there; the new bytes are then linked in
  // only if nothing was published meanwhile. Between the two the key reads as absent
  // (microseconds).
  const std::string what = "replace object " + Quote(key) + " in " + Describe();
  const std::string aside = tmp_dir_ + "/replace." + RandomHex(8);
  if (::rename(final_path.c_str(), aside.c_str()) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return Status::PreconditionFailed(what + ": absent, not at ETag " + if_match);
    }
    return Status::FromErrno(errno, what);
  }
  struct stat st;
  const std::string etag = ::stat(aside.c_str(), &st) == 0 ? StatEtag(st) : "?";
  if (etag != if_match) {
    // Back under its key, unless a newer version landed meanwhile (which replaces it anyway).
    if (::renameat2(AT_FDCWD, aside.c_str(), AT_FDCWD, final_path.c_str(), RENAME_NOREPLACE) != 0) {
      ::unlink(aside.c_str());
    }
    return Status::PreconditionFailed(what + ": ETag is " + etag + ", not " + if_match);
  }
  int rc = ::link(tmp_path.c_str(), final_path.c_str());
  if (rc != 0 && (errno == EPERM || errno == ENOTSUP || errno == EMLINK)) {
    rc = ::renameat2(AT_FDCWD, tmp_path.c_str(), AT_FDCWD, final_path.c_str(), RENAME_NOREPLACE);
  }
  const int err = errno;
  ::unlink(aside.c_str());  // the version replaced (or, after a lost race, one replaced anyway)
  if (rc != 0 && err == EEXIST) {
    return Status::PreconditionFailed(what + ": another version was published meanwhile");
  }
  if (rc != 0) return Status::FromErrno(err, what);
  return Status::OK();
}

Result<ObjectInfo> DirStore::Head(const std::string& key) {
  KVFS_ASSIGN_OR_RETURN(std::string path, ObjectPath(key));
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return Status::NotFound("no object " + Quote(key) + " in " + Describe());
    }
    return Status::FromErrno(errno, "stat object " + Quote(key) + " in " + Describe());
  }
  ObjectInfo info = InfoFromStat(key, st);
  info.crc32c = ChecksumXattr(path);
  if (info.crc32c) info.slice_crcs = SliceChecksumXattr(path, info.size);
  info.kvfs_written = HasWriterMark(path);
  info.user_xattrs = UserXattrsOf(path);
  return info;
}

Result<uint64_t> DirStore::GetSync(const GetRequest& req, const RangeReader& read) {
  KVFS_ASSIGN_OR_RETURN(std::string path, ObjectPath(req.key));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return Status::NotFound("no object " + Quote(req.key) + " in " + Describe());
    }
    return Status::FromErrno(errno, "open object " + Quote(req.key) + " in " + Describe());
  }
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::FromErrno(errno, "stat object " + Quote(req.key));
  if (!req.if_match.empty() && req.if_match != StatEtag(st)) {
    return Status::PreconditionFailed("object " + Quote(req.key) + " in " + Describe() +
                                      " changed: ETag is " + StatEtag(st) + ", expected " +
                                      req.if_match);
  }
  if (req.on_info) {
    ObjectInfo info = InfoFromStat(req.key, st);
    info.crc32c = ChecksumXattr(fd);
    if (info.crc32c) info.slice_crcs = SliceChecksumXattr(fd, info.size);
    info.kvfs_written = HasWriterMark(path);
    info.user_xattrs = UserXattrsOf(fd);
    req.on_info(info);
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (req.offset >= size) return uint64_t{0};
  uint64_t want = std::min(req.length, size - req.offset);
  // The file behind fd never changes (writers replace it by rename), so a short read is damage.
  KVFS_ASSIGN_OR_RETURN(uint64_t got, read(fd, req.offset, want));
  if (got != want) {
    return Status::DataLoss("object " + Quote(req.key) + " in " + Describe() + " is shorter (" +
                            std::to_string(req.offset + got) + " bytes) than its size " +
                            std::to_string(size));
  }
  return got;
}

void DirStore::GetAsync(const GetRequest& req, char* dst, GetCallback done) {
  done(GetSync(req, [&](int fd, uint64_t offset, uint64_t want) {
    return ReadAt(fd, dst, want, offset, req.key);
  }));
}

void DirStore::GetStreamAsync(const GetRequest& req, GetSink sink, GetCallback done) {
  done(GetSync(req, [&](int fd, uint64_t offset, uint64_t want) -> Result<uint64_t> {
    // Pieces of a size that stays in the CPU cache between the read and the sink's use of it, in
    // one buffer per calling thread: no allocation per GET (GETs run inline, on few threads).
    thread_local std::vector<char> buf(1 << 20);
    uint64_t got = 0;
    while (got < want) {
      const uint64_t n = std::min<uint64_t>(buf.size(), want - got);
      KVFS_ASSIGN_OR_RETURN(uint64_t r, ReadAt(fd, buf.data(), n, offset + got, req.key));
      if (r > 0) KVFS_RETURN_IF_ERROR(sink(buf.data(), r));
      got += r;
      if (r < n) break;  // GetSync reports the short object
    }
    return got;
  }));
}

Result<ObjectInfo> DirStore::PutSync(const std::string& key, const Body& body,
                                     const PutOptions& opts) {
  KVFS_RETURN_IF_ERROR(EncodeKey(key, layout_).status());
  std::string what = "object " + Quote(key);
  KVFS_ASSIGN_OR_RETURN(std::string tmp, WriteTemp(
                                             [&](int fd) {
                                               KVFS_RETURN_IF_ERROR(WriteBody(fd, body, what));
                                               SetChecksumXattr(fd, opts.crc32c);
                                               if (opts.crc32c) {
                                                 SetSliceChecksumXattr(fd, opts.slice_crcs);
                                               }
                                               SetWriterXattr(fd);
                                               return SetUserXattrs(fd, opts.user_xattrs, what);
                                             },
                                             what));
  return Publish(tmp, key, opts);
}

void DirStore::PutAsync(const std::string& key, const Body& body, const PutOptions& opts,
                        PutCallback done) {
  done(PutSync(key, body, opts));
}

void DirStore::PruneEmptyParents(const std::string& path) const {
  std::string dir = path.substr(0, path.rfind('/'));
  while (dir.size() > objects_dir_.size() && ::rmdir(dir.c_str()) == 0) {
    dir = dir.substr(0, dir.rfind('/'));
  }
}

Status DirStore::Delete(const std::string& key, const DeleteOptions& opts) {
  KVFS_ASSIGN_OR_RETURN(std::string path, ObjectPath(key));
  if (opts.if_match.empty()) {
    if (::unlink(path.c_str()) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) return Status::OK();
      return Status::FromErrno(errno, "delete object " + Quote(key) + " in " + Describe());
    }
    PruneEmptyParents(path);
    return Status::OK();
  }
  // Exact If-Match: the version the key holds is moved aside in one rename (which keeps its
  // inode and mtime, so its ETag), compared there, and removed only if it is the one asked for.
  // A write that publishes meanwhile lands on the key and is never touched. The one cost: when
  // the ETag differs, the key reads as absent between the two renames (microseconds).
  const std::string aside = tmp_dir_ + "/delete." + RandomHex(8);
  if (::rename(path.c_str(), aside.c_str()) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::OK();
    return Status::FromErrno(errno, "delete object " + Quote(key) + " in " + Describe());
  }
  struct stat st;
  const std::string etag = ::stat(aside.c_str(), &st) == 0 ? StatEtag(st) : "?";
  if (etag == opts.if_match) {
    ::unlink(aside.c_str());
    PruneEmptyParents(path);
    return Status::OK();
  }
  // Back under its key - unless a newer version was published meanwhile, which replaces it as
  // that write would have anyway. A concurrent delete may have pruned the emptied parents.
  for (int attempt = 0; attempt < kPublishAttempts; ++attempt) {
    int rc = ::renameat2(AT_FDCWD, aside.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
      rc = ::link(aside.c_str(), path.c_str());  // no RENAME_NOREPLACE here: link() refuses too
    }
    if (rc == 0 || errno != ENOENT) break;
    (void)MkdirAll(path.substr(0, path.rfind('/')));
  }
  ::unlink(aside.c_str());  // gone after a rename; the second name after a link or a lost race
  return Status::PreconditionFailed("delete object " + Quote(key) + " in " + Describe() +
                                    ": ETag is " + etag + ", not " + opts.if_match);
}

Result<ObjectInfo> DirStore::Copy(const std::string& src_key, const std::string& dst_key,
                                  const PutOptions& opts) {
  KVFS_ASSIGN_OR_RETURN(std::string src_path, ObjectPath(src_key));
  KVFS_RETURN_IF_ERROR(EncodeKey(dst_key, layout_).status());
  int src = ::open(src_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (src < 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return Status::NotFound("copy source " + Quote(src_key) + " not found in " + Describe());
    }
    return Status::FromErrno(errno, "open copy source " + Quote(src_key));
  }
  FdCloser closer(src);
  struct stat st;
  if (::fstat(src, &st) != 0) return Status::FromErrno(errno, "stat " + Quote(src_key));
  std::string what = "copy of " + Quote(src_key) + " to " + Quote(dst_key);
  // As S3's CopyObject, the copy keeps the source's metadata: its checksum.
  PutOptions publish = opts;
  publish.crc32c = ChecksumXattr(src);
  publish.slice_crcs = SliceChecksumXattr(src, static_cast<uint64_t>(st.st_size));
  const bool src_marked = HasWriterMark(src_path);
  publish.user_xattrs = UserXattrsOf(src).value_or("");
  KVFS_ASSIGN_OR_RETURN(
      std::string tmp,
      WriteTemp(
          [&](int fd) {
            KVFS_RETURN_IF_ERROR(CopyFile(src, fd, static_cast<uint64_t>(st.st_size), what));
            SetChecksumXattr(fd, publish.crc32c);
            if (publish.crc32c) SetSliceChecksumXattr(fd, publish.slice_crcs);
            if (src_marked) SetWriterXattr(fd);
            return SetUserXattrs(fd, publish.user_xattrs, what);
          },
          what));
  return Publish(tmp, dst_key, publish);
}

// ---------------------------------------------------------------------------------------------
// Listing of the directory store: one page walked from the continuation point
// (objstore/dir/dir_tree_walker.h), statelessly as an S3 server answers; the continuation token
// names the last key or common prefix returned.
namespace {

constexpr int kMaxPage = 1000;  // S3's cap on max-keys

std::string ToHex(const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) out += {kHex[c >> 4], kHex[c & 15]};
  return out;
}

std::optional<std::string> FromHex(std::string_view s) {
  if (s.size() % 2 != 0) return std::nullopt;
  auto val = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); i += 2) {
    int hi = val(s[i]), lo = val(s[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

}  // namespace

Result<ListResult> DirStore::List(const ListRequest& req) {
  ListResult out;
  if (req.max_keys <= 0) return out;
  int max_keys = std::min(req.max_keys, kMaxPage);

  // The token is "k<hex key>" after a key or "p<hex prefix>" after a common prefix.
  std::string after;
  bool after_prefix = false;
  if (!req.continuation_token.empty()) {
    auto decoded = FromHex(std::string_view(req.continuation_token).substr(1));
    char kind = req.continuation_token[0];
    if (!decoded || (kind != 'k' && kind != 'p')) {
      return Status::InvalidArgument("invalid continuation token for " + Describe());
    }
    after = *decoded;
    after_prefix = kind == 'p';
  }

  WalkBounds bounds;
  bounds.prefix = req.prefix;
  bounds.delimiter = req.delimiter;
  bounds.has_after = !req.continuation_token.empty();
  bounds.after = std::move(after);
  bounds.after_is_prefix = after_prefix;
  bounds.limit = static_cast<size_t>(max_keys) + 1;  // one more tells the page is truncated
  KVFS_ASSIGN_OR_RETURN(auto items, DirTreeWalker(objects_dir_, layout_, std::move(bounds)).Walk());
  for (size_t i = 0; i < items.size(); ++i) {
    if (i == static_cast<size_t>(max_keys)) {
      out.truncated = true;
      out.next_continuation_token = (items[i - 1].is_prefix ? "p" : "k") + ToHex(items[i - 1].key);
      break;
    }
    if (items[i].is_prefix) {
      out.common_prefixes.push_back(items[i].key);
      continue;
    }
    struct stat st;
    if (::stat(items[i].path.c_str(), &st) != 0) continue;  // deleted meanwhile
    out.objects.push_back(InfoFromStat(items[i].key, st));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Multipart uploads of the directory store. An upload is a directory <root>/uploads/<id>/
// holding "key" (the object key it belongs to) and one file per uploaded part ("part-00001").
// Complete concatenates the parts into a temporary file and publishes it like a PUT.
namespace {

constexpr int kMaxPartNumber = 10000;          // as on S3
constexpr uint64_t kMinPartSize = 5ull << 20;  // every part but the last, as on S3
constexpr size_t kUploadIdHexChars = 32;

std::string PartName(int part_number) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "part-%05d", part_number);
  return buf;
}

void RemoveTree(const std::string& dir) {
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') ::unlinkat(::dirfd(d), e->d_name, 0);
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

}  // namespace

Result<std::string> DirStore::UploadDir(const std::string& key,
                                        const std::string& upload_id) const {
  auto missing = [&] {
    return Status::NotFound("no multipart upload '" + upload_id + "' for object '" + key + "' in " +
                            Describe());
  };
  // The id becomes a path: accept only what CreateMultipartUpload hands out.
  if (upload_id.size() != kUploadIdHexChars ||
      upload_id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return missing();
  }
  std::string dir = uploads_dir_ + "/" + upload_id;
  int fd = ::open((dir + "/key").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return missing();
  FdCloser closer(fd);
  std::string stored(kMaxKeyBytes + 1, '\0');
  KVFS_ASSIGN_OR_RETURN(uint64_t n,
                        PreadFull(fd, stored.data(), stored.size(), 0, "read " + dir + "/key"));
  stored.resize(n);
  if (stored != key) return missing();
  return dir;
}

Result<std::string> DirStore::CreateMultipartUpload(const std::string& key,
                                                    const MultipartOptions& opts) {
  KVFS_RETURN_IF_ERROR(EncodeKey(key, layout_).status());
  std::string id = RandomHex(kUploadIdHexChars / 2);
  std::string dir = uploads_dir_ + "/" + id;
  if (::mkdir(dir.c_str(), 0700) != 0) {
    return Status::FromErrno(errno, "create multipart upload directory " + dir);
  }
  KVFS_ASSIGN_OR_RETURN(
      std::string tmp,
      WriteTemp(
          [&](int fd) {
            KVFS_RETURN_IF_ERROR(WriteBody(fd, Body::FromMemory(key.data(), key.size()), dir));
            // Kept on the upload's key file until completion gives them to the object.
            return SetUserXattrs(fd, opts.user_xattrs, "multipart upload of '" + key + "'");
          },
          "multipart upload of '" + key + "'"));
  if (::rename(tmp.c_str(), (dir + "/key").c_str()) != 0) {
    Status st = Status::FromErrno(errno, "create multipart upload " + dir);
    ::unlink(tmp.c_str());
    RemoveTree(dir);
    return st;
  }
  return id;
}

Result<std::string> DirStore::UploadPartSync(const std::string& key, const std::string& upload_id,
                                             int part_number, const Body& body) {
  if (part_number < 1 || part_number > kMaxPartNumber) {
    return Status::InvalidArgument("part number " + std::to_string(part_number) + " of object '" +
                                   key + "' is outside 1.." + std::to_string(kMaxPartNumber));
  }
  KVFS_ASSIGN_OR_RETURN(std::string dir, UploadDir(key, upload_id));
  std::string what = "part " + std::to_string(part_number) + " of '" + key + "'";
  KVFS_ASSIGN_OR_RETURN(std::string tmp,
                        WriteTemp([&](int fd) { return WriteBody(fd, body, what); }, what));
  struct stat st;
  int rc = ::stat(tmp.c_str(), &st);
  if (rc == 0) rc = ::rename(tmp.c_str(), (dir + "/" + PartName(part_number)).c_str());
  if (rc != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    if (err == ENOENT) return UploadDir(key, upload_id).status();  // aborted meanwhile
    return Status::FromErrno(err, "store " + what);
  }
  return StatEtag(st);
}

void DirStore::UploadPartAsync(const std::string& key, const std::string& upload_id,
                               int part_number, const Body& body, PartCallback done) {
  done(UploadPartSync(key, upload_id, part_number, body));
}

Result<ObjectInfo> DirStore::CompleteMultipartUpload(const std::string& key,
                                                     const std::string& upload_id,
                                                     const std::vector<CompletedPart>& parts,
                                                     const PutOptions& opts) {
  KVFS_ASSIGN_OR_RETURN(std::string dir, UploadDir(key, upload_id));
  std::string what = "multipart upload of '" + key + "'";
  if (parts.empty()) return Status::InvalidArgument(what + ": no parts to complete");
  std::vector<uint64_t> sizes;
  for (size_t i = 0; i < parts.size(); ++i) {
    const CompletedPart& p = parts[i];
    std::string part_what = what + ", part " + std::to_string(p.part_number);
    if (i > 0 && p.part_number <= parts[i - 1].part_number) {
      return Status::InvalidArgument(part_what + ": parts must be in ascending order");
    }
    struct stat st;
    if (::stat((dir + "/" + PartName(p.part_number)).c_str(), &st) != 0) {
      return Status::InvalidArgument(part_what + ": part was not uploaded");
    }
    if (!p.etag.empty() && p.etag != StatEtag(st)) {
      return Status::InvalidArgument(part_what + ": ETag " + p.etag + " does not match " +
                                     StatEtag(st));
    }
    uint64_t size = static_cast<uint64_t>(st.st_size);
    if (i + 1 < parts.size() && size < kMinPartSize) {
      return Status::InvalidArgument(part_what + ": " + std::to_string(size) +
                                     " bytes is below the 5 MiB minimum of all but the last part");
    }
    sizes.push_back(size);
  }
  // The attributes given when the upload was created (its key file holds them).
  PutOptions attrs = opts;
  attrs.user_xattrs = UserXattrsOf(dir + "/key").value_or("");
  auto concat = [&](int fd) -> Status {
    for (size_t i = 0; i < parts.size(); ++i) {
      std::string path = dir + "/" + PartName(parts[i].part_number);
      int src = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (src < 0) return Status::FromErrno(errno, "open " + path);
      FdCloser closer(src);
      KVFS_RETURN_IF_ERROR(CopyFile(src, fd, sizes[i], what));
    }
    SetWriterXattr(fd);
    return SetUserXattrs(fd, attrs.user_xattrs, what);
  };
  KVFS_ASSIGN_OR_RETURN(std::string tmp, WriteTemp(concat, what));
  KVFS_ASSIGN_OR_RETURN(ObjectInfo info, Publish(tmp, key, attrs));
  RemoveTree(dir);
  return info;
}

Status DirStore::AbortMultipartUpload(const std::string& key, const std::string& upload_id) {
  KVFS_ASSIGN_OR_RETURN(std::string dir, UploadDir(key, upload_id));
  RemoveTree(dir);
  return Status::OK();
}

Result<std::vector<UnfinishedUpload>> DirStore::ListUnfinishedUploads(const std::string& prefix) {
  std::vector<UnfinishedUpload> out;
  DIR* d = ::opendir(uploads_dir_.c_str());
  if (d == nullptr) return Status::FromErrno(errno, "list multipart uploads in " + uploads_dir_);
  while (dirent* e = ::readdir(d)) {
    std::string id = e->d_name;
    if (id.size() != kUploadIdHexChars) continue;
    std::string key_path = uploads_dir_ + "/" + id + "/key";
    int fd = ::open(key_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;  // being created or aborted right now
    FdCloser closer(fd);
    struct stat st;
    std::string key(kMaxKeyBytes + 1, '\0');
    auto n = PreadFull(fd, key.data(), key.size(), 0, key_path);
    if (!n.ok() || ::fstat(fd, &st) != 0) continue;
    key.resize(*n);
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    out.push_back({std::move(key), std::move(id), static_cast<int64_t>(st.st_mtime)});
  }
  ::closedir(d);
  return out;
}

}  // namespace dirstore
}  // namespace kvfs
