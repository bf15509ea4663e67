// LocalFile's bytes (fs/local_file.h): writes, truncation and reads of the spool file, the
// CRC32C folded as the bytes come, the parts sent while written (EarlyUpload), and the preload of
// an object's bytes for an O_RDWR open.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "base/posix_io.h"
#include "fs/local_file.h"

namespace kvfs {

Result<uint64_t> LocalFile::Write(uint64_t offset, const char* data, uint64_t n, Outcome* out) {
  const FsOptions& o = *env_.options;
  MutexLock l(&mu_);
  if (offset > o.max_chunk_bytes || n > o.max_chunk_bytes - offset) {
    return Status::ResourceExhausted("write past max_chunk_bytes (" +
                                     std::to_string(o.max_chunk_bytes) + ") in '" + place_.display +
                                     "'");
  }
  if (state_ == State::kFailed) return failure_;
  Status st = PwriteFull(fd_, data, n, offset, "writing spool file for '" + place_.display + "'");
  if (!st.ok()) {
    // Bytes the engine wrote are lost (ENOSPC, EIO of the cache disk): the file can never become
    // the chunk, so it fails now and its close reports the same error.
    *out = FailLocked(st);
    return st;
  }
  spool_crc_.Add(offset, data, n);  // while the bytes are in the CPU cache
  if (offset + n > size_) SetSizeLocked(offset + n);
  DirtyLocked();
  if (o.upload_while_writing && !temp_ && !replaces_ && state_ == State::kDirty) {
    if (!early_) {
      early_ = std::make_unique<EarlyUpload>(env_.store, place_.key, fd_, o.multipart_part_size,
                                             o.upload_parallelism, env_.uploader->aborts());
    }
    early_->OnWrite(offset, n);
  }
  return n;
}

Status LocalFile::Truncate(uint64_t new_size) {
  MutexLock l(&mu_);
  if (new_size > env_.options->max_chunk_bytes) {
    return Status::ResourceExhausted("truncate past max_chunk_bytes in '" + place_.display + "'");
  }
  if (state_ == State::kFailed) return failure_;
  if (early_) early_->Invalidate();  // bytes already sent may change
  if (ftruncate(fd_, static_cast<off_t>(new_size)) != 0) {
    spool_crc_.Invalidate();  // the spool's size is not known now
    return Status::FromErrno(errno, "truncating spool file for '" + place_.display + "'");
  }
  if (new_size == 0) {
    spool_crc_.Reset();
  } else if (new_size != size_) {
    spool_crc_.Invalidate();  // cut or zero-extended: computed from the spool if needed
  }
  SetSizeLocked(new_size);
  DirtyLocked();
  return Status::OK();
}

Status LocalFile::Preload(ReadHandle* from, uint64_t size) {
  MutexLock l(&mu_);
  constexpr uint64_t kStep = 1 << 20;
  std::unique_ptr<char[]> buf(new char[kStep]);
  uint64_t off = 0;
  while (off < size) {
    KVFS_ASSIGN_OR_RETURN(uint64_t n, from->Read(off, std::min(kStep, size - off), buf.get()));
    if (n == 0) break;
    KVFS_RETURN_IF_ERROR(
        PwriteFull(fd_, buf.get(), n, off, "writing spool file for '" + place_.display + "'"));
    spool_crc_.Add(off, buf.get(), n);
    off += n;
  }
  if (off != size) {
    return Status::IoError("'" + place_.display + "' changed while it was opened: " +
                           std::to_string(off) + " of " + std::to_string(size) + " bytes read");
  }
  SetSizeLocked(size);
  replaces_ = true;
  return Status::OK();
}

Result<uint64_t> LocalFile::Read(uint64_t offset, uint64_t n, char* buf) const {
  return PreadFull(fd_, buf, n, offset, "reading spool file " + spool_path_);
}

}  // namespace kvfs
