// Ranged GET with resumption: bytes go straight to the caller's sink; a transfer that fails
// mid-body continues with "Range: bytes=<next>-" and If-Match on the ETag first seen, so the
// result is never short and never mixes two versions of the object.
#pragma once

#include "objstore/object_store.h"
#include "objstore/s3/s3_client.h"

namespace kvfs::s3 {

// Starts the GET; `sink` and `done` run on the loop thread (see ObjectStore::GetAsync and
// GetStreamAsync for the contract). The sink never gets more than req.length bytes in all.
void StartGet(S3Client* client, const GetRequest& req, ObjectStore::GetSink sink,
              ObjectStore::GetCallback done);

// A sink that copies into dst, which has room for the whole range.
ObjectStore::GetSink MemorySink(char* dst);

// What kvfs recorded with an object, from a HEAD's or a GET's reply headers: its writer's
// CRC32C, slice CRCs (with the CRC only; Fits is the reader's to check against the size) and
// writer mark (ObjectInfo::crc32c, slice_crcs, kvfs_written).
void KvfsMetadataFromHeaders(const HttpExchange& ex, ObjectInfo* info);

// Parses "bytes 0-9/10" (total may be "*" -> -1). False if malformed.
bool ParseContentRange(const std::string& value, uint64_t* first, uint64_t* last, int64_t* total);

}  // namespace kvfs::s3
