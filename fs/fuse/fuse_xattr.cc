// Extended attributes: the mount root's control attributes - the statistics
// (FuseOptions::stats_text, read by `kvfs stats`), the log level (FuseOptions::set_log_level,
// `kvfs log-level`), sync and tier_gc - and the user.* attributes of chunk files
// (Filesystem::GetXattr and its kin; base/user_xattrs.h), published with the chunk.
#include "fs/fuse/fuse_xattr.h"

#include <spdlog/spdlog.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>

#include "base/log.h"
#include "base/user_xattrs.h"

namespace kvfs::fuse_internal {
namespace {

// Replies with `value` following the getxattr/listxattr size protocol: size 0 asks for the
// length; a buffer too small is ERANGE.
void ReplyXattrValue(fuse_req_t req, const char* op, const std::string& value, size_t size,
                     const std::string& target = "of the root") {
  if (size == 0) {
    fuse_reply_xattr(req, value.size());
  } else if (size < value.size()) {
    ReplyErrno(req, op, target, ERANGE);
  } else {
    fuse_reply_buf(req, value.data(), value.size());
  }
}

void ReplyXattrResult(fuse_req_t req, const char* op, const std::string& target,
                      const Result<std::string>& r, size_t size) {
  if (!r.ok()) return ReplyErr(req, op, target, r.status());
  ReplyXattrValue(req, op, *r, size, target);
}

UserXattrs::SetMode ModeOf(int flags) {
  if (flags & XATTR_CREATE) return UserXattrs::SetMode::kCreate;
  if (flags & XATTR_REPLACE) return UserXattrs::SetMode::kReplace;
  return UserXattrs::SetMode::kAny;
}

const FuseOptions& OptionsOf(fuse_req_t req) {
  return static_cast<Context*>(fuse_req_userdata(req))->options;
}

std::string CurrentLogLevel() {
  const auto name = spdlog::level::to_string_view(spdlog::get_level());
  return std::string(name.data(), name.size());
}

}  // namespace

void OpGetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  // Files and directories have no attributes but a chunk's user.* ones: "no such attribute"
  // (ENODATA), the answer engines and tools expect (ENOTSUP would say attributes cannot exist at
  // all). Not logged, and without a look at the file: it is the normal answer (the kernel asks
  // for security.capability before writes).
  if (ino != FUSE_ROOT_ID) {
    if (!UserXattrs::Accepts(name)) {
      fuse_reply_err(req, ENODATA);
      return;
    }
    // It may ask the store (HEAD) for an object known from a listing only.
    const ScopedDeadline deadline = RequestDeadline(req);
    const std::string attr = name;
    return WaitOnStore(
        req,
        [req, ino, attr, size] {
          ReplyXattrResult(req, "getxattr", attr + " of " + Ino(ino), FsOf(req).GetXattr(ino, attr),
                           size);
        },
        LateReply(req, "getxattr", attr + " of " + Ino(ino)));
  }
  const FuseOptions& o = OptionsOf(req);
  if (o.stats_text && std::strcmp(name, kStatsXattr) == 0) {
    return ReplyXattrValue(req, "getxattr", o.stats_text(), size);
  }
  if (o.set_log_level && std::strcmp(name, kLogLevelXattr) == 0) {
    return ReplyXattrValue(req, "getxattr", CurrentLogLevel(), size);
  }
  if (o.sync_accepted && std::strcmp(name, kSyncXattr) == 0) {
    // It waits for uploads (each within blocking_timeout): on a store-write thread, never a
    // FUSE worker.
    const ScopedDeadline deadline = RequestDeadline(req);
    return WaitOnStoreWrite(
        req,
        [req, size, &o] {
          std::string report = o.sync_accepted();
          constexpr size_t kMax = 64 << 10;  // XATTR_SIZE_MAX: the report is cut to fit
          if (report.size() > kMax) report.resize(report.rfind('\n', kMax - 1) + 1);
          ReplyXattrValue(req, "getxattr", report, size);
        },
        LateReply(req, "getxattr", std::string(kSyncXattr) + " of the root"));
  }
  ReplyErrno(req, "getxattr", std::string(name) + " of the root", ENODATA);
}

void OpListxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  if (ino != FUSE_ROOT_ID) {
    return ReplyXattrResult(req, "listxattr", Ino(ino), FsOf(req).ListXattrs(ino), size);
  }
  std::string names;
  const FuseOptions& o = OptionsOf(req);
  if (o.stats_text) names.append(kStatsXattr, sizeof(kStatsXattr));  // with its NUL
  if (o.set_log_level) names.append(kLogLevelXattr, sizeof(kLogLevelXattr));
  ReplyXattrValue(req, "listxattr", names, size);
}

void OpSetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                int flags) {
  if (ino != FUSE_ROOT_ID && UserXattrs::Accepts(name)) {
    const Status st = FsOf(req).SetXattr(ino, name, std::string(value, size), ModeOf(flags));
    return ReplyStatus(req, "setxattr", std::string(name) + " of " + Ino(ino), st);
  }
  const FuseOptions& o = OptionsOf(req);
  const bool tier_gc = o.run_tier_gc && std::strcmp(name, kTierGcXattr) == 0;
  if (ino != FUSE_ROOT_ID ||
      (!tier_gc && (!o.set_log_level || std::strcmp(name, kLogLevelXattr) != 0))) {
    return ReplyErrno(req, "setxattr", std::string(name) + " of " + Ino(ino), ENOTSUP);
  }
  // With allow_other, other users reach the root too: only root and the daemon's user may turn
  // the daemon's logging up or off, or make it collect.
  const uid_t uid = fuse_req_ctx(req)->uid;
  if (uid != 0 && uid != getuid()) {
    return ReplyErrno(req, "setxattr", std::string(name) + " by uid " + std::to_string(uid), EPERM);
  }
  if (tier_gc)
    return ReplyStatus(req, "setxattr", std::string(name) + " of the root", o.run_tier_gc());
  std::string level(value, size);
  while (!level.empty() && (level.back() == '\n' || level.back() == '\0')) level.pop_back();
  const std::string before = CurrentLogLevel();
  ReplyStatus(req, "setxattr", std::string(name) + " of the root", o.set_log_level(level));
  // Logged at warn so that the change is visible whatever the old and the new level are.
  if (CurrentLogLevel() != before) {
    LogWarn("kvfs: log level changed from {} to {} by uid {}", before, CurrentLogLevel(), uid);
  }
}

void OpRemovexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  if (ino != FUSE_ROOT_ID && UserXattrs::Accepts(name)) {
    const Status st = FsOf(req).RemoveXattr(ino, name);
    return ReplyStatus(req, "removexattr", std::string(name) + " of " + Ino(ino), st);
  }
  ReplyErrno(req, "removexattr", std::string(name) + " of " + Ino(ino), ENOTSUP);
}

}  // namespace kvfs::fuse_internal
