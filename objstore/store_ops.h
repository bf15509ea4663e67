// StoreOp: the one list of ObjectStore operations, from which the decorators (StoreWrapper's
// interception, MeteredStore's metrics, the test fakes' FaultStore and MemoryStore counters) are
// driven. Describe() and Stats() are not operations: they send nothing to the store.
//
// Adding an operation:
//   1. one line below;
//   2. its virtual method and contract in objstore/object_store.h;
//   3. its forwarding in objstore/store_wrapper.h (one call of Intercepted / InterceptedAsync);
//   4. its implementations (objstore/s3, objstore/dir, tests/fakes/memory_store).
// MeteredStore and FaultStore then meter and fault it with no change of their own.
//
// Columns: X(enumerator, name, metered, moves_bytes)
//   name         the operation's name in metrics (op="...") and messages
//   metered      timed by MeteredStore (kvfs_store_request_duration_seconds and its errors)
//   moves_bytes  MeteredStore counts its bytes (kvfs_store_bytes_total): a GET's bytes read, a
//                PUT's or part's body
// The order is the order of the metrics' lines.
#pragma once

#include <cstddef>

namespace kvfs {

#define KVFS_STORE_OPS(X)                                       \
  X(kHead, "HEAD", true, false)                                 \
  X(kGet, "GET", true, true)                                    \
  X(kPut, "PUT", true, true)                                    \
  X(kUploadPart, "UploadPart", true, true)                      \
  X(kCreateMultipart, "CreateMultipartUpload", true, false)     \
  X(kCompleteMultipart, "CompleteMultipartUpload", true, false) \
  X(kAbortMultipart, "AbortMultipartUpload", true, false)       \
  X(kList, "LIST", true, false)                                 \
  X(kDelete, "DELETE", true, false)                             \
  X(kCopy, "COPY", true, false)                                 \
  X(kCheckAccess, "CheckAccess", false, false)                  \
  X(kListUnfinishedUploads, "ListMultipartUploads", false, false)

enum class StoreOp : int {
#define KVFS_STORE_OP_ENUM(e, name, metered, moves_bytes) e,
  KVFS_STORE_OPS(KVFS_STORE_OP_ENUM)
#undef KVFS_STORE_OP_ENUM
};

#define KVFS_STORE_OP_COUNT(e, name, metered, moves_bytes) +1
inline constexpr size_t kNumStoreOps = 0 KVFS_STORE_OPS(KVFS_STORE_OP_COUNT);
#undef KVFS_STORE_OP_COUNT

struct StoreOpInfo {
  const char* name;
  bool metered;
  bool moves_bytes;
};

inline constexpr StoreOpInfo kStoreOps[kNumStoreOps] = {
#define KVFS_STORE_OP_INFO(e, name, metered, moves_bytes) {name, metered, moves_bytes},
    KVFS_STORE_OPS(KVFS_STORE_OP_INFO)
#undef KVFS_STORE_OP_INFO
};

constexpr size_t OpIndex(StoreOp op) { return static_cast<size_t>(op); }
constexpr const StoreOpInfo& OpInfo(StoreOp op) { return kStoreOps[OpIndex(op)]; }

}  // namespace kvfs
