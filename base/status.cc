#include "base/status.h"

#include <cstring>

namespace kvfs {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kNotFound:
      return "NotFound";
    case StatusCode::kAlreadyExists:
      return "AlreadyExists";
    case StatusCode::kPreconditionFailed:
      return "PreconditionFailed";
    case StatusCode::kPermissionDenied:
      return "PermissionDenied";
    case StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case StatusCode::kUnavailable:
      return "Unavailable";
    case StatusCode::kDeadlineExceeded:
      return "DeadlineExceeded";
    case StatusCode::kDataLoss:
      return "DataLoss";
    case StatusCode::kIoError:
      return "IoError";
    case StatusCode::kNotSupported:
      return "NotSupported";
    case StatusCode::kResourceExhausted:
      return "ResourceExhausted";
    case StatusCode::kNoSpace:
      return "NoSpace";
    case StatusCode::kNameTooLong:
      return "NameTooLong";
    case StatusCode::kBusy:
      return "Busy";
    case StatusCode::kCancelled:
      return "Cancelled";
    case StatusCode::kNoData:
      return "NoData";
    case StatusCode::kInternal:
      return "Internal";
  }
  return "Unknown";
}

Status Status::FromErrno(int err, const std::string& context) {
  char buf[128];
  // GNU strerror_r returns a pointer that may or may not be buf.
  const char* text = strerror_r(err, buf, sizeof(buf));
  StatusCode code = StatusCode::kIoError;
  switch (err) {
    case ENOENT:
      code = StatusCode::kNotFound;
      break;
    case EEXIST:
      code = StatusCode::kAlreadyExists;
      break;
    case EACCES:
    case EPERM:
      code = StatusCode::kPermissionDenied;
      break;
    case EINVAL:
      code = StatusCode::kInvalidArgument;
      break;
    case ENAMETOOLONG:
      code = StatusCode::kNameTooLong;
      break;
    // A full disk is not a configured bound: the writer must see ENOSPC, not EFBIG.
    case ENOSPC:
    case EDQUOT:
      code = StatusCode::kNoSpace;
      break;
    case EFBIG:
      code = StatusCode::kResourceExhausted;
      break;
    case EBUSY:
      code = StatusCode::kBusy;
      break;
    default:
      break;
  }
  Status st(code, context + ": " + text);
  st.sys_errno_ = err;
  return st;
}

Status Status::Annotate(const std::string& context) const {
  if (ok()) return *this;
  Status s = *this;
  s.message_ = context + ": " + message_;
  return s;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out = StatusCodeName(code_);
  out += ": ";
  out += message_;
  if (http_status_ != 0 || !s3_code_.empty()) {
    out += " (HTTP " + std::to_string(http_status_);
    if (!s3_code_.empty()) out += ", " + s3_code_;
    if (!request_id_.empty()) out += ", request id " + request_id_;
    out += ")";
  }
  return out;
}

}  // namespace kvfs
