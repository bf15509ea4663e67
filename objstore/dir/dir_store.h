// The local-directory object store (file:///abs/path): kvfs's embedded default store, and the
// reference the S3 store is checked against in the conformance tests. Same semantics as S3:
//  - writes are atomic: the body goes to a temporary file in <root>/tmp, is fsynced and renamed
//    onto the object's file; readers see the old or the new object, never a mix;
//  - conditional create (PutOptions::if_none_match) publishes with link(), which fails if the
//    name exists, so exactly one of several concurrent creators wins; the others get
//    kAlreadyExists;
//  - keys are any bytes (1..1024): see objstore/dir/dir_key_codec.h for the collision-free
//    on-disk naming; listing is in ascending byte order of key, with prefix, delimiter,
//    max_keys (at most 1000) and continuation tokens;
//  - multipart uploads keep their parts in <root>/uploads/<upload id>/ until complete
//    concatenates them (every part but the last must be >= 5 MiB, as on S3) or abort removes them;
//  - ETags are "<inode>-<mtime ns>-<size>" in hex: stable while an object is unchanged, new for
//    every write (also for a copy, unlike S3's MD5 ETags).
// Layout: <root>/objects/... (objects), <root>/tmp/ (temporary files, removed at startup when
// older than an hour), <root>/uploads/ (multipart uploads), <root>/layout ("tree": each '/' of a
// key is a directory, so a listing under a prefix reads only its directory; "flat": every key a
// file of objects/, the layout of roots made before 2026-12, kept for them - a kvfs from before
// sees no objects in a tree root).
// Asynchronous calls complete inline, on the caller's thread. Thread-safe; several processes
// may share a root.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "objstore/dir/dir_store_options.h"
#include "objstore/object_store.h"

namespace kvfs {

// Opens (and creates with mode 0700 if missing) a directory store rooted at root_dir, which
// may be relative (it is made absolute) or a "file://" URL.
Result<std::shared_ptr<ObjectStore>> NewDirStore(const std::string& root_dir,
                                                 const DirStoreOptions& options = {});

}  // namespace kvfs
