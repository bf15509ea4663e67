#include "tests/fakes/memory_store.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "base/posix_io.h"

namespace kvfs {

namespace {

int64_t NowSec() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// FNV-1a: a cheap content fingerprint for ETags (a fake does not need MD5).
uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// S3 refuses keys over 1024 bytes; so does the directory store. A fake that accepted them would
// let code that only works on the fake pass its tests.
constexpr size_t kMaxKeyBytes = 1024;

Status CheckKey(const std::string& key) {
  if (key.size() <= kMaxKeyBytes) return Status::OK();
  return Status::NameTooLong("memory store: object key of " + std::to_string(key.size()) +
                             " bytes is longer than " + std::to_string(kMaxKeyBytes));
}

}  // namespace

Result<std::string> MemoryStore::ReadBody(const Body& body) {
  if (body.fd < 0) {
    if (body.length > 0 && body.data == nullptr) return Status::InvalidArgument("null body");
    return std::string(body.data ? body.data : "", body.length);
  }
  std::string out(body.length, '\0');
  KVFS_RETURN_IF_ERROR(
      PreadExact(body.fd, out.data(), body.length, body.offset, "memory store: body file"));
  return out;
}

ObjectInfo MemoryStore::InfoOf(const std::string& key, const Object& obj) {
  return ObjectInfo{key,        obj.data.size(), obj.etag,         obj.mtime_sec,
                    obj.crc32c, obj.slice_crcs,  obj.kvfs_written, obj.user_xattrs};
}

ObjectInfo MemoryStore::ListedInfoOf(const std::string& key, const Object& obj) {
  ObjectInfo info = InfoOf(key, obj);
  info.user_xattrs.reset();
  return info;
}

std::string MemoryStore::NextEtagLocked(const std::string& data) {
  // The counter makes two writes of the same bytes distinguishable, like a new version would be.
  return Hex64(Fnv1a(data) ^ (next_id_++ << 40));
}

Result<ObjectInfo> MemoryStore::Head(const std::string& key) {
  Count(StoreOp::kHead);
  MutexLock l(&mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return Status::NotFound("no such key: " + key);
  return InfoOf(key, it->second);
}

void MemoryStore::GetAsync(const GetRequest& req, char* dst, GetCallback done) {
  Count(StoreOp::kGet);
  std::optional<ObjectInfo> info;
  Result<uint64_t> result = [&]() -> Result<uint64_t> {
    MutexLock l(&mu_);
    auto it = objects_.find(req.key);
    if (it == objects_.end()) return Status::NotFound("no such key: " + req.key);
    const Object& obj = it->second;
    if (!req.if_match.empty() && req.if_match != obj.etag) {
      return Status::PreconditionFailed("object changed: " + req.key);
    }
    info = InfoOf(req.key, obj);
    if (req.offset >= obj.data.size()) return uint64_t{0};
    uint64_t n = std::min<uint64_t>(req.length, obj.data.size() - req.offset);
    std::memcpy(dst, obj.data.data() + req.offset, n);
    return n;
  }();
  if (info && req.on_info) req.on_info(*info);
  done(std::move(result));
}

void MemoryStore::PutAsync(const std::string& key, const Body& body, const PutOptions& opts,
                           PutCallback done) {
  Count(StoreOp::kPut);
  Result<ObjectInfo> result = [&]() -> Result<ObjectInfo> {
    KVFS_RETURN_IF_ERROR(CheckKey(key));
    KVFS_ASSIGN_OR_RETURN(std::string data, ReadBody(body));
    MutexLock l(&mu_);
    if (opts.if_none_match && objects_.count(key)) {
      return Status::AlreadyExists("key exists: " + key);
    }
    if (!opts.if_match.empty()) {
      auto it = objects_.find(key);
      if (it == objects_.end() || it->second.etag != opts.if_match) {
        return Status::PreconditionFailed("key " + key + " is not at ETag " + opts.if_match);
      }
    }
    Object& obj = objects_[key];
    obj.etag = NextEtagLocked(data);
    obj.data = std::move(data);
    obj.mtime_sec = NowSec();
    obj.crc32c = opts.crc32c;
    obj.slice_crcs = opts.crc32c && opts.slice_crcs && opts.slice_crcs->Fits(obj.data.size())
                         ? opts.slice_crcs
                         : std::nullopt;
    obj.kvfs_written = true;
    obj.user_xattrs = opts.user_xattrs;
    return InfoOf(key, obj);
  }();
  done(std::move(result));
}

Result<std::string> MemoryStore::CreateMultipartUpload(const std::string& key,
                                                       const MultipartOptions& opts) {
  Count(StoreOp::kCreateMultipart);
  KVFS_RETURN_IF_ERROR(CheckKey(key));
  MutexLock l(&mu_);
  std::string id = "upload-" + std::to_string(next_id_++);
  uploads_.Begin(id, key, time(nullptr));
  upload_xattrs_[id] = opts.user_xattrs;
  return id;
}

Result<std::vector<UnfinishedUpload>> MemoryStore::ListUnfinishedUploads(
    const std::string& prefix) {
  Count(StoreOp::kListUnfinishedUploads);
  MutexLock l(&mu_);
  return uploads_.Unfinished(prefix);
}

void MemoryStore::UploadPartAsync(const std::string& key, const std::string& upload_id,
                                  int part_number, const Body& body, PartCallback done) {
  Count(StoreOp::kUploadPart);
  Result<std::string> result = [&]() -> Result<std::string> {
    if (part_number < 1 || part_number > 10000) {
      return Status::InvalidArgument("part number out of range: " + std::to_string(part_number));
    }
    KVFS_ASSIGN_OR_RETURN(std::string data, ReadBody(body));
    MutexLock l(&mu_);
    KVFS_ASSIGN_OR_RETURN(MemoryUploads::Part * part, uploads_.PartOf(upload_id, key, part_number));
    part->etag = NextEtagLocked(data);
    part->data = std::move(data);
    return part->etag;
  }();
  done(std::move(result));
}

Result<ObjectInfo> MemoryStore::CompleteMultipartUpload(const std::string& key,
                                                        const std::string& upload_id,
                                                        const std::vector<CompletedPart>& parts,
                                                        const PutOptions& opts) {
  Count(StoreOp::kCompleteMultipart);
  MutexLock l(&mu_);
  KVFS_ASSIGN_OR_RETURN(std::string data, uploads_.Assemble(upload_id, key, parts, min_part_size_));
  // As on S3, a lost conditional create keeps the upload (the caller aborts it).
  if (opts.if_none_match && objects_.count(key)) {
    return Status::AlreadyExists("key exists: " + key);
  }
  Object& obj = objects_[key];
  obj.etag = NextEtagLocked(data) + "-" + std::to_string(parts.size());
  obj.data = std::move(data);
  obj.mtime_sec = NowSec();
  obj.slice_crcs.reset();
  obj.crc32c.reset();       // as on S3: metadata is set at CreateMultipartUpload, with no checksum
  obj.kvfs_written = true;  // but with the writer mark
  obj.user_xattrs = upload_xattrs_[upload_id];
  upload_xattrs_.erase(upload_id);
  KVFS_RETURN_IF_ERROR(uploads_.End(upload_id, key));
  return InfoOf(key, obj);
}

Status MemoryStore::AbortMultipartUpload(const std::string& key, const std::string& upload_id) {
  Count(StoreOp::kAbortMultipart);
  MutexLock l(&mu_);
  upload_xattrs_.erase(upload_id);
  return uploads_.End(upload_id, key);
}

Result<ListResult> MemoryStore::List(const ListRequest& req) {
  Count(StoreOp::kList);
  if (req.max_keys <= 0) return Status::InvalidArgument("max_keys must be positive");
  MutexLock l(&mu_);
  return ListOrderedKeys(objects_, req, &MemoryStore::ListedInfoOf);
}

Status MemoryStore::Delete(const std::string& key, const DeleteOptions& opts) {
  Count(StoreOp::kDelete);
  std::function<void()> before;
  {
    MutexLock l(&mu_);
    auto hook = before_delete_.find(key);
    if (hook != before_delete_.end()) {
      before = std::move(hook->second);
      before_delete_.erase(hook);
    }
  }
  if (before) before();
  MutexLock l(&mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return Status::OK();
  if (!opts.if_match.empty() && opts.if_match != it->second.etag) {
    return Status::PreconditionFailed("delete " + key + ": ETag is " + it->second.etag + ", not " +
                                      opts.if_match);
  }
  objects_.erase(it);
  return Status::OK();
}

void MemoryStore::BeforeNextDelete(const std::string& key, std::function<void()> fn) {
  MutexLock l(&mu_);
  before_delete_[key] = std::move(fn);
}

Result<ObjectInfo> MemoryStore::Copy(const std::string& src_key, const std::string& dst_key,
                                     const PutOptions& opts) {
  Count(StoreOp::kCopy);
  KVFS_RETURN_IF_ERROR(CheckKey(dst_key));
  MutexLock l(&mu_);
  auto it = objects_.find(src_key);
  if (it == objects_.end()) return Status::NotFound("no such key: " + src_key);
  if (opts.if_none_match && objects_.count(dst_key)) {
    return Status::AlreadyExists("key exists: " + dst_key);
  }
  std::string data = it->second.data;                     // copy before operator[] may rebalance
  const std::optional<uint32_t> crc = it->second.crc32c;  // S3 copies metadata
  const std::optional<SliceCrcs> slices = it->second.slice_crcs;
  const bool marked = it->second.kvfs_written;
  const std::string attrs = it->second.user_xattrs;
  Object& obj = objects_[dst_key];
  obj.etag = NextEtagLocked(data);
  obj.data = std::move(data);
  obj.mtime_sec = NowSec();
  obj.crc32c = crc;
  obj.slice_crcs = slices;
  obj.kvfs_written = marked;
  obj.user_xattrs = attrs;
  return InfoOf(dst_key, obj);
}

void MemoryStore::PutObject(const std::string& key, std::string data) {
  MutexLock l(&mu_);
  Object& obj = objects_[key];
  obj.etag = NextEtagLocked(data);
  obj.data = std::move(data);
  obj.mtime_sec = NowSec();
  obj.crc32c.reset();
  obj.slice_crcs.reset();
  obj.kvfs_written = false;
  obj.user_xattrs.clear();
}

void MemoryStore::CorruptObject(const std::string& key, uint64_t offset) {
  MutexLock l(&mu_);
  auto it = objects_.find(key);
  if (it != objects_.end() && offset < it->second.data.size()) it->second.data[offset] ^= 0xff;
}

std::optional<std::string> MemoryStore::GetObject(const std::string& key) const {
  MutexLock l(&mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return std::nullopt;
  return it->second.data;
}

std::vector<std::string> MemoryStore::Keys() const {
  MutexLock l(&mu_);
  std::vector<std::string> keys;
  for (const auto& [k, v] : objects_) keys.push_back(k);
  return keys;
}

size_t MemoryStore::ObjectCount() const {
  MutexLock l(&mu_);
  return objects_.size();
}

size_t MemoryStore::PendingUploadCount() const {
  MutexLock l(&mu_);
  return uploads_.size();
}

uint64_t MemoryStore::Requests() const {
  uint64_t n = 0;
  for (const auto& c : calls_) n += c.load();
  return n;
}

void MemoryStore::SetMinPartSize(uint64_t bytes) {
  MutexLock l(&mu_);
  min_part_size_ = bytes;
}

std::shared_ptr<ObjectStore> NewMemoryStore() { return std::make_shared<MemoryStore>(); }

void MemoryStore::SetMtime(const std::string& key, int64_t mtime_sec) {
  MutexLock l(&mu_);
  auto it = objects_.find(key);
  if (it != objects_.end()) it->second.mtime_sec = mtime_sec;
}

}  // namespace kvfs
