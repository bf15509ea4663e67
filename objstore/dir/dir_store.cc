#include "objstore/dir/dir_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <memory>
#include <vector>

#include "base/posix_io.h"
#include "objstore/dir/dir_file_util.h"
#include "objstore/dir/dir_key_codec.h"
#include "objstore/dir/dir_store_impl.h"

namespace kvfs {
namespace dirstore {
namespace {

constexpr time_t kStaleTempSecs = 3600;
// A concurrent Delete may remove an empty parent directory between our mkdir and rename; that
// many rounds of "create parents, publish" are tried before giving up.
constexpr int kPublishAttempts = 8;

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

Status DirStore::CheckAccess() {
  for (const std::string* dir : {&objects_dir_, &tmp_dir_, &uploads_dir_}) {
    if (::access(dir->c_str(), R_OK | W_OK | X_OK) != 0) {
      return Status::FromErrno(errno, "directory store " + Describe() + ": " + *dir);
    }
  }
  return Status::OK();
}

Result<std::string> DirStore::ObjectPath(const std::string& key) const {
  KVFS_ASSIGN_OR_RETURN(auto components, EncodeKey(key));
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
  KVFS_ASSIGN_OR_RETURN(auto components, EncodeKey(key));
  std::string final_path = objects_dir_ + "/" + JoinPath(components);
  std::string parent = objects_dir_;
  for (int attempt = 0;; ++attempt) {
    parent = objects_dir_;
    for (size_t i = 0; i + 1 < components.size(); ++i) {
      parent += "/" + components[i];
      KVFS_RETURN_IF_ERROR(MkdirOne(parent));
    }
    int rc;
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
  return info;
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
  KVFS_RETURN_IF_ERROR(EncodeKey(key).status());
  std::string what = "object " + Quote(key);
  KVFS_ASSIGN_OR_RETURN(std::string tmp, WriteTemp(
                                             [&](int fd) {
                                               KVFS_RETURN_IF_ERROR(WriteBody(fd, body, what));
                                               SetChecksumXattr(fd, opts.crc32c);
                                               return Status::OK();
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

Status DirStore::Delete(const std::string& key) {
  KVFS_ASSIGN_OR_RETURN(std::string path, ObjectPath(key));
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::OK();
    return Status::FromErrno(errno, "delete object " + Quote(key) + " in " + Describe());
  }
  PruneEmptyParents(path);
  return Status::OK();
}

Result<ObjectInfo> DirStore::Copy(const std::string& src_key, const std::string& dst_key,
                                  const PutOptions& opts) {
  KVFS_ASSIGN_OR_RETURN(std::string src_path, ObjectPath(src_key));
  KVFS_RETURN_IF_ERROR(EncodeKey(dst_key).status());
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
  KVFS_ASSIGN_OR_RETURN(
      std::string tmp,
      WriteTemp(
          [&](int fd) {
            KVFS_RETURN_IF_ERROR(CopyFile(src, fd, static_cast<uint64_t>(st.st_size), what));
            SetChecksumXattr(fd, publish.crc32c);
            return Status::OK();
          },
          what));
  return Publish(tmp, dst_key, publish);
}

}  // namespace dirstore

Result<std::shared_ptr<ObjectStore>> NewDirStore(const std::string& root_dir,
                                                 const DirStoreOptions& options) {
  std::string root = root_dir;
  if (root.rfind("file://", 0) == 0) root = root.substr(7);
  if (root.empty()) return Status::InvalidArgument("directory store: empty root directory");
  if (root[0] != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) return Status::FromErrno(errno, "getcwd");
    root = std::string(cwd) + "/" + root;
  }
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  auto store = std::make_shared<dirstore::DirStore>(root, options);
  KVFS_RETURN_IF_ERROR(store->Init().Annotate("directory store file://" + root));
  return std::shared_ptr<ObjectStore>(std::move(store));
}

}  // namespace kvfs
