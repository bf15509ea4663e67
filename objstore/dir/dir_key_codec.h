// Key <-> path codec of the directory store (objstore/dir/dir_store.h).
//
// An object key (any bytes, 1..1024 of them) becomes a relative path below <root>/objects:
//  - each byte outside [A-Za-z0-9-_.~@] becomes %XX (upper-case hex), so '/' never splits a key
//    into directories by itself and '%' cannot be confused with an escape;
//  - the escaped name is cut into components of at most kMaxComponent bytes (file names are
//    limited to 255 bytes); every component but the last ends in '+', a character the escaping
//    never produces, so a directory can never collide with a file of another key;
//  - a component that would start with '.' starts with "%2E" instead, so no component is ".",
//    ".." or a hidden file.
// The mapping is a pure function of the key, and decoding accepts only names that the encoder
// produces (re-encoding must give the same path), so two keys can never share a file and stray
// files in the tree are ignored.
// Thread-safe: free functions without state.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kvfs::dirstore {

inline constexpr size_t kMaxKeyBytes = 1024;  // S3's limit
inline constexpr size_t kMaxComponent = 240;  // bytes per path component, '+' marker excluded
inline constexpr char kDirMarker = '+';

// The path components of a key: all but the last end in kDirMarker. InvalidArgument for an
// empty key, NameTooLong above kMaxKeyBytes.
Result<std::vector<std::string>> EncodeKey(std::string_view key);

// Decodes one component (without its marker). nullopt if it holds bytes the encoder never
// writes or a malformed escape.
std::optional<std::string> DecodeComponent(std::string_view component);

// Components joined by '/'.
std::string JoinPath(const std::vector<std::string>& components);

}  // namespace kvfs::dirstore
