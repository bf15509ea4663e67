// What every FUSE operation handler (fs/fuse/fuse_adapter.cc, fuse_file_ops.cc, fuse_xattr.cc)
// shares: the session's context, reaching it from a request, filling attributes, and the one place
// a request is answered with an error (logged once, fs/fuse/reply_log.h). Internal to the adapter.
//
// Thread-safety: the functions are called on FUSE worker threads concurrently; the Context is
// set up before the session starts and only read afterwards (its members are thread-safe).
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <sys/stat.h>

#include <functional>
#include <string>

#include "base/deadline.h"
#include "base/executor.h"
#include "base/status.h"
#include "fs/filesystem.h"
#include "fs/fuse/fuse_options.h"
#include "fs/fuse/passthrough_table.h"
#include "fs/fuse/reply_log.h"

namespace kvfs::fuse_internal {

struct Context {
  Filesystem* fs;
  FuseOptions options;
  // Lookups, stats, opens and reads that wait on the store run here, so FUSE workers never wait
  // on a dead or slow store themselves: stat of cached names, reads of cached chunks, statfs and
  // `kvfs stats` keep a free worker (libfuse allows replies from any thread).
  Executor* store_waits;
  // Closes, fsyncs and releases of files written here, renames, links, unlinks, mkdir and rmdir
  // wait for uploads and store writes here: a store that stalls (20 writers in close(), vLLM's
  // fs tier has 16 store threads) then holds these threads, never every FUSE worker, so cached
  // chunks still read and names still stat (issue 47 item 5). A pool apart from store_waits:
  // stuck uploads do not delay the lookups and reads that wait on the store either.
  Executor* store_writes;
  // Failed replies: at most 20 log lines a second, then a count of those left out.
  LogRateLimiter reply_log{20, 1000};
  // Which opens the kernel reads from cache files itself (enabled at INIT when granted).
  PassthroughTable passthrough{};
};

inline Context& CtxOf(fuse_req_t req) { return *static_cast<Context*>(fuse_req_userdata(req)); }
inline Filesystem& FsOf(fuse_req_t req) { return *CtxOf(req).fs; }
// Runs `run` on the store-wait threads under the request's deadline; `late` (LateReply) instead
// when the deadline passes while it is queued, so a queue behind a dead store drains within
// blocking_timeout. The executor outlives the session loop, so scheduling cannot fail here.
inline void WaitOnStore(fuse_req_t req, std::function<void()> run, std::function<void()> late) {
  CtxOf(req).store_waits->Schedule(KeepingDeadline(std::move(run), std::move(late)));
}

// WaitOnStore on the store-write threads (Context::store_writes).
inline void WaitOnStoreWrite(fuse_req_t req, std::function<void()> run,
                             std::function<void()> late) {
  CtxOf(req).store_writes->Schedule(KeepingDeadline(std::move(run), std::move(late)));
}

void FillStat(const FileAttr& a, struct stat* st);
// ttl_secs: the entry and attribute timeout (< 0: the whole metadata TTL; 0: the kernel asks
// again for every path walk, as for a chunk being written).
void ReplyEntry(fuse_req_t req, const FileAttr& attr, double ttl_secs = -1);

// What a failed request was about, for its log line.
std::string Ino(fuse_ino_t ino);
std::string Named(fuse_ino_t parent, const char* name);

// The one place a request is answered with an error: logged once (fs/fuse/reply_log.h), then sent.
void ReplyErrno(fuse_req_t req, const char* op, const std::string& target, int err,
                const Status& cause = Status::OK());
void ReplyErr(fuse_req_t req, const char* op, const std::string& target, const Status& st);
// For requests whose whole answer is a status (rmdir, unlink, rename, fsync).
void ReplyStatus(fuse_req_t req, const char* op, const std::string& target, const Status& st);

// Every request that may wait on the store ends within blocking_timeout: the store operations it
// starts on this thread inherit the deadline (base/deadline.h).
ScopedDeadline RequestDeadline(fuse_req_t req);
// The answer to a request past its deadline before a store-wait thread could take it (the `late`
// of WaitOnStore).
std::function<void()> LateReply(fuse_req_t req, const char* op, std::string target);

}  // namespace kvfs::fuse_internal
