#include "objstore/s3/s3_store.h"

namespace kvfs {

// Placeholder until the engine lands: keeps the public API linkable for other engineers.
Result<std::shared_ptr<ObjectStore>> NewS3Store(const S3Options& options) {
  return Status::NotSupported("S3 store not implemented yet");
}

}  // namespace kvfs
