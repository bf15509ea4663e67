// Extended attributes: only the statistics attribute of the mount root exists
// (FuseOptions::stats_text, read by `kvfs stats`).
#include "fs/fuse_xattr.h"

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>

namespace kvfs::fuse_internal {
namespace {

// Replies with `value` following the getxattr/listxattr size protocol: size 0 asks for the
// length; a buffer too small is ERANGE.
void ReplyXattrValue(fuse_req_t req, const char* op, const std::string& value, size_t size) {
  if (size == 0) {
    fuse_reply_xattr(req, value.size());
  } else if (size < value.size()) {
    ReplyErrno(req, op, "of the root", ERANGE);
  } else {
    fuse_reply_buf(req, value.data(), value.size());
  }
}

const std::function<std::string()>& StatsTextOf(fuse_req_t req) {
  return static_cast<Context*>(fuse_req_userdata(req))->options.stats_text;
}

}  // namespace

void OpGetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  // Files and directories have no attributes (as before, when the kernel answered itself).
  if (ino != FUSE_ROOT_ID)
    return ReplyErrno(req, "getxattr", std::string(name) + " of " + Ino(ino), ENOTSUP);
  const auto& stats = StatsTextOf(req);
  if (!stats || std::strcmp(name, kStatsXattr) != 0) {
    return ReplyErrno(req, "getxattr", std::string(name) + " of the root", ENODATA);
  }
  ReplyXattrValue(req, "getxattr", stats(), size);
}

void OpListxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  if (ino != FUSE_ROOT_ID) return ReplyErrno(req, "listxattr", Ino(ino), ENOTSUP);
  std::string names;
  if (StatsTextOf(req)) names.append(kStatsXattr, sizeof(kStatsXattr));  // with its NUL
  ReplyXattrValue(req, "listxattr", names, size);
}

void OpSetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char*, size_t, int) {
  ReplyErrno(req, "setxattr", std::string(name) + " of " + Ino(ino), ENOTSUP);
}

void OpRemovexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  ReplyErrno(req, "removexattr", std::string(name) + " of " + Ino(ino), ENOTSUP);
}

}  // namespace kvfs::fuse_internal
