// Multipart uploads of the directory store. An upload is a directory <root>/uploads/<id>/
// holding "key" (the object key it belongs to) and one file per uploaded part ("part-00001").
// Complete concatenates the parts into a temporary file and publishes it like a PUT.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/posix_io.h"
#include "objstore/dir/dir_file_util.h"
#include "objstore/dir/dir_key_codec.h"
#include "objstore/dir/dir_store_impl.h"

namespace kvfs::dirstore {
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

Result<std::string> DirStore::CreateMultipartUpload(const std::string& key) {
  KVFS_RETURN_IF_ERROR(EncodeKey(key).status());
  std::string id = RandomHex(kUploadIdHexChars / 2);
  std::string dir = uploads_dir_ + "/" + id;
  if (::mkdir(dir.c_str(), 0700) != 0) {
    return Status::FromErrno(errno, "create multipart upload directory " + dir);
  }
  KVFS_ASSIGN_OR_RETURN(
      std::string tmp,
      WriteTemp(
          [&](int fd) { return WriteBody(fd, Body::FromMemory(key.data(), key.size()), dir); },
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
  auto concat = [&](int fd) -> Status {
    for (size_t i = 0; i < parts.size(); ++i) {
      std::string path = dir + "/" + PartName(parts[i].part_number);
      int src = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (src < 0) return Status::FromErrno(errno, "open " + path);
      FdCloser closer(src);
      KVFS_RETURN_IF_ERROR(CopyFile(src, fd, sizes[i], what));
    }
    return Status::OK();
  };
  KVFS_ASSIGN_OR_RETURN(std::string tmp, WriteTemp(concat, what));
  KVFS_ASSIGN_OR_RETURN(ObjectInfo info, Publish(tmp, key, opts));
  RemoveTree(dir);
  return info;
}

Status DirStore::AbortMultipartUpload(const std::string& key, const std::string& upload_id) {
  KVFS_ASSIGN_OR_RETURN(std::string dir, UploadDir(key, upload_id));
  RemoveTree(dir);
  return Status::OK();
}

}  // namespace kvfs::dirstore

namespace kvfs::dirstore {

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

}  // namespace kvfs::dirstore
