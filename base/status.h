// Status and Result<T>: the error type every layer of kvfs returns. No exceptions cross a layer
// boundary; callers inspect the code, and the filesystem maps it to an errno in exactly one place
// (fs/errno_map.h).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace kvfs {

// A small set of codes, chosen so that each maps to one errno and one retry decision.
enum class StatusCode : unsigned char {
  kOk = 0,
  kNotFound,            // object / file / bucket does not exist
  kAlreadyExists,       // conditional create lost: the key exists
  kPreconditionFailed,  // If-Match failed: the object changed
  kPermissionDenied,    // bad credentials, access denied, policy "deny"
  kInvalidArgument,     // bad input: partial chunk, bad name, bad config value
  kUnavailable,         // transient: 5xx, 429/SlowDown, connection reset; retryable
  kDeadlineExceeded,    // an operation ran past its time limit
  kDataLoss,            // bytes that do not match (short body, checksum, size mismatch)
  kIoError,             // local I/O failure
  kNotSupported,        // operation not supported by this store / filesystem
  kResourceExhausted,   // a configured bound was hit (file too large, cache full)
  kNoSpace,             // the local disk (spool, cache directory) is full: ENOSPC, EDQUOT
  kNameTooLong,         // name or key over its limit
  kBusy,                // held by another open on this node until it is closed: EBUSY
  kCancelled,           // shut down while the operation waited
  kNoData,              // no such extended attribute: ENODATA
  kInternal,            // a bug or an unexpected server answer
};

const char* StatusCodeName(StatusCode code);

// Immutable result of an operation. Thread-compatible: a const Status may be read from any
// thread; mutation needs external synchronization.
class Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status PreconditionFailed(std::string m) {
    return {StatusCode::kPreconditionFailed, std::move(m)};
  }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status DeadlineExceeded(std::string m) {
    return {StatusCode::kDeadlineExceeded, std::move(m)};
  }
  static Status DataLoss(std::string m) { return {StatusCode::kDataLoss, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  // A failed system call: the code follows err (ENOENT -> kNotFound, ...; others kIoError), the
  // message appends strerror(err), and sys_errno() keeps err.
  static Status FromErrno(int err, const std::string& context);
  static Status NotSupported(std::string m) { return {StatusCode::kNotSupported, std::move(m)}; }
  static Status ResourceExhausted(std::string m) {
    return {StatusCode::kResourceExhausted, std::move(m)};
  }
  static Status NoSpace(std::string m) { return {StatusCode::kNoSpace, std::move(m)}; }
  static Status Busy(std::string m) { return {StatusCode::kBusy, std::move(m)}; }
  static Status NameTooLong(std::string m) { return {StatusCode::kNameTooLong, std::move(m)}; }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status NoData(std::string m) { return {StatusCode::kNoData, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The errno of the failed system call this status came from (FromErrno), else 0.
  int sys_errno() const { return sys_errno_; }
  // True for errors worth another attempt (transient server or network trouble).
  bool retryable() const {
    return code_ == StatusCode::kUnavailable || code_ == StatusCode::kDeadlineExceeded;
  }

  // Details of a failed HTTP request (0 / empty when not from HTTP).
  int http_status() const { return http_status_; }
  const std::string& s3_code() const { return s3_code_; }
  const std::string& request_id() const { return request_id_; }
  Status& SetHttp(int http_status, std::string s3_code, std::string request_id) {
    http_status_ = http_status;
    s3_code_ = std::move(s3_code);
    request_id_ = std::move(request_id);
    return *this;
  }

  // Returns a copy whose message is "<context>: <message>", keeping code and HTTP details.
  Status Annotate(const std::string& context) const;
  // "NotFound: <message> (HTTP 404, NoSuchKey, request id ...)".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  int sys_errno_ = 0;
  int http_status_ = 0;
  std::string s3_code_;
  std::string request_id_;
};

// Either a value or a non-OK Status. Thread-compatible.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok() && "Result built from an OK status has no value");
    if (status_.ok()) status_ = Status::Internal("Result constructed from OK status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace kvfs

#define KVFS_CONCAT_INNER_(a, b) a##b
#define KVFS_CONCAT_(a, b) KVFS_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function if `expr` is not OK.
#define KVFS_RETURN_IF_ERROR(expr)       \
  do {                                   \
    ::kvfs::Status kvfs_st_ = (expr);    \
    if (!kvfs_st_.ok()) return kvfs_st_; \
  } while (0)

// `lhs = value of expr`, or returns its Status. lhs may be a declaration: `auto x`.
#define KVFS_ASSIGN_OR_RETURN(lhs, expr) \
  KVFS_ASSIGN_OR_RETURN_IMPL_(KVFS_CONCAT_(kvfs_res_, __LINE__), lhs, expr)
#define KVFS_ASSIGN_OR_RETURN_IMPL_(res, lhs, expr) \
  auto res = (expr);                                \
  if (!res.ok()) return res.status();               \
  lhs = std::move(res).value()
