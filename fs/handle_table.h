// HandleTable: the numbers the kernel holds for open files and directories (fuse_file_info::fh)
// and what each one refers to: a FileHandle (the object or the local file opened) or a DirStream.
// File and directory handles share one counter, so a number is never given out twice while the
// mount lives.
//
// Thread-safety: thread-safe. One internal mutex, a leaf: held only to find, add or remove an
// entry, never while another lock is taken nor across a store request. Entries are shared_ptrs,
// so a handle removed while a request still uses it lives until that request lets it go (and is
// freed outside the mutex).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_annotations.h"
#include "fs/dir_stream.h"
#include "fs/read/chunk_reader.h"
#include "fs/spool_file.h"
#include "objstore/object_store.h"

namespace kvfs {

// One open file. Set up before it is added to the table; afterwards only the atomic changes.
struct FileHandle {
  uint64_t ino = 0;
  bool writable = false;
  bool sync = false;  // opened O_SYNC/O_DSYNC: its close waits for the store (write_back)
  std::atomic<pid_t> last_writer_thread{0};  // saves a /proc read per write of one thread
  ObjectInfo info;                           // object: the one opened (fstat after unlink)
  // Exactly one of the two: a file written here (or a temp file), whose bytes are in the spool;
  // or an uploaded object, read from the cache or the store.
  std::shared_ptr<SpoolFile> spool;
  std::unique_ptr<ReadHandle> object;
};

class HandleTable {
 public:
  uint64_t AddFile(std::shared_ptr<FileHandle> h) EXCLUDES(mu_);
  // kInvalidArgument ("bad file handle") for a number that is not an open file.
  Result<std::shared_ptr<FileHandle>> File(uint64_t fh) const EXCLUDES(mu_);
  // Removes the file handle `fh` and returns it; kInvalidArgument as for File.
  Result<std::shared_ptr<FileHandle>> TakeFile(uint64_t fh) EXCLUDES(mu_);
  // The open file handles of inode `ino`.
  std::vector<std::shared_ptr<FileHandle>> FilesOf(uint64_t ino) const EXCLUDES(mu_);

  uint64_t AddDir(std::shared_ptr<DirStream> d) EXCLUDES(mu_);
  // kInvalidArgument ("bad directory handle") for a number that is not an open directory.
  Result<std::shared_ptr<DirStream>> Dir(uint64_t fh) const EXCLUDES(mu_);
  // Removes the directory handle `fh` and returns it (null if there is none).
  std::shared_ptr<DirStream> TakeDir(uint64_t fh) EXCLUDES(mu_);
  std::vector<std::shared_ptr<DirStream>> Dirs() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::unordered_map<uint64_t, std::shared_ptr<FileHandle>> files_ GUARDED_BY(mu_);
  std::unordered_map<uint64_t, std::shared_ptr<DirStream>> dirs_ GUARDED_BY(mu_);
  uint64_t next_fh_ GUARDED_BY(mu_) = 1;
};

}  // namespace kvfs
