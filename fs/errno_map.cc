#include "fs/errno_map.h"

#include <cerrno>

namespace kvfs {

int ToErrno(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return 0;
    case StatusCode::kNotFound:
      return ENOENT;
    case StatusCode::kAlreadyExists:
      return EEXIST;
    // The object changed under an open handle: the handle is stale, not the disk broken. Also
    // "object shorter (or longer) than listed" (ObjectSizeChanged): the listing was stale.
    case StatusCode::kPreconditionFailed:
      return ESTALE;
    // EPERM, not EACCES: what the kernel sees as "denied" are kvfs refusals (unlink_policy deny,
    // chmod/chown/truncate of uploaded files, links) - "operation not permitted". Bad credentials
    // are caught at mount time.
    case StatusCode::kPermissionDenied:
      return EPERM;
    case StatusCode::kInvalidArgument:
      return EINVAL;
    case StatusCode::kUnavailable:
      return EIO;
    case StatusCode::kDeadlineExceeded:
      return ETIMEDOUT;
    case StatusCode::kDataLoss:
      return EIO;
    case StatusCode::kIoError:
      return EIO;
    case StatusCode::kNotSupported:
      return ENOTSUP;
    // A configured bound: past max_chunk_bytes (cache-full is handled by streaming, never seen).
    case StatusCode::kResourceExhausted:
      return EFBIG;
    // The spool or cache directory's disk is full.
    case StatusCode::kNoSpace:
      return ENOSPC;
    case StatusCode::kNameTooLong:
      return ENAMETOOLONG;
    // Another open on this node holds the file in a mode this one cannot share (the kernel's
    // passthrough rules: fs/fuse/passthrough_table.h).
    case StatusCode::kBusy:
      return EBUSY;
    case StatusCode::kCancelled:
      return EINTR;
    // getxattr or removexattr of an attribute the file does not have.
    case StatusCode::kNoData:
      return ENODATA;
    case StatusCode::kInternal:
      return EIO;
  }
  return EIO;
}

}  // namespace kvfs
