// Ranged GET with resumption: bytes go straight into the caller's buffer; a transfer that fails
// mid-body continues with "Range: bytes=<next>-" and If-Match on the ETag first seen, so the
// result is never short and never mixes two versions of the object.
#pragma once

#include "objstore/object_store.h"
#include "objstore/s3/s3_client.h"

namespace kvfs::s3 {

// Starts the GET; `done` runs once on the loop thread (see ObjectStore::GetAsync for the
// contract).
void StartGet(S3Client* client, const GetRequest& req, char* dst, ObjectStore::GetCallback done);

// Parses "bytes 0-9/10" (total may be "*" -> -1). False if malformed.
bool ParseContentRange(const std::string& value, uint64_t* first, uint64_t* last, int64_t* total);

}  // namespace kvfs::s3
