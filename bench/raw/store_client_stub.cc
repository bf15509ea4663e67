// StoreClientFactory for raw_s3_curl: the build without kvfs's S3 store (used while that store
// does not build or link yet). raw_s3 then measures with libcurl only.
#include "bench/raw/raw_client.h"

namespace kvbench {

kvfs::Result<RawClientFactory> StoreClientFactory(const RawConfig&) {
  return kvfs::Status::NotSupported("raw_s3_curl is built without the kvfs S3 store");
}

}  // namespace kvbench
