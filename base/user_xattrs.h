// UserXattrs: the user.* extended attributes of a chunk file. They are set while the chunk is
// written (vLLM's fs tier keeps a block's CRC32C in one), published with it as one object metadata
// value (kXattrsMetaHeader on S3, an xattr of the directory store's file) and read back on every
// node. One value, not one header per attribute: S3 metadata names are case-insensitive ASCII,
// attribute names are not.
//
// Encoded as "name=value&name=value", names in order, both percent-encoded (RFC 3986's
// unreserved bytes kept): S3 metadata values are printable US-ASCII. The encoding is bounded by
// kMaxEncodedBytes, S3's 2 KiB of user metadata less what kvfs's checksums take (up to ~1.1 KiB).
//
// Thread-compatible: a value type.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kvfs {

class UserXattrs {
 public:
  static constexpr size_t kMaxEncodedBytes = 768;
  // What setxattr(2) flags ask (XATTR_CREATE, XATTR_REPLACE).
  enum class SetMode { kAny, kCreate, kReplace };

  // Whether `name` is a user attribute a chunk may carry: "user." and more, outside "user.kvfs."
  // (the mount root's control attributes).
  static bool Accepts(std::string_view name);

  // kAlreadyExists (kCreate, it exists), kNoData (kReplace, it does not), kNoSpace (the encoding
  // would pass kMaxEncodedBytes; nothing changes).
  Status Set(const std::string& name, std::string value, SetMode mode);
  // kNoData when absent.
  Result<std::string> Get(const std::string& name) const;
  Status Remove(const std::string& name);
  // The names, each followed by a NUL (listxattr's answer).
  std::string Names() const;
  bool empty() const { return attrs_.empty(); }

  std::string Encode() const;
  // kInvalidArgument for text Encode() does not make.
  static Result<UserXattrs> Decode(std::string_view encoded);

  bool operator==(const UserXattrs& other) const = default;

 private:
  std::map<std::string, std::string> attrs_;
};

}  // namespace kvfs
