// Key <-> path codec of the directory store (objstore/dir/dir_store.h).
//
// An object key (any bytes, 1..1024 of them) becomes a relative path below <root>/objects:
//  - in the tree layout (KeyLayout::kTree, every store created since 2026-12) each '/' of the key
//    ends a directory: the segment before it is a directory whose name ends in '=' ("=" alone for
//    an empty segment), so the keys under a prefix "a/b/" are the files below objects/a=/b=/ and
//    listing them reads only that directory - the fleet feed's 400 ms listing of
//    "~kvfs-feed/" no longer reads every chunk's name. A key that ends in '/' (an S3 folder
//    marker) is the file "%" in its directory. In the flat layout (KeyLayout::kFlat, stores
//    created before) '/' is escaped like any other byte and every key is a file of objects/;
//  - each byte outside [A-Za-z0-9-_.~@] becomes %XX (upper-case hex), so '%' cannot be confused
//    with an escape and no name holds '+' or '=' but as the markers below;
//  - an escaped segment is cut into components of at most kMaxComponent bytes (file names are
//    limited to 255 bytes); every component of a segment but its last ends in '+' (a directory),
//    so a directory can never collide with a file of another key;
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
inline constexpr char kDirMarker = '+';       // a segment continues in the directory
inline constexpr char kSegmentMarker = '=';   // a segment ended by '/' (tree layout)
inline constexpr std::string_view kEmptyLastSegment = "%";  // the file of a key ending in '/'

enum class KeyLayout { kFlat, kTree };

// The path components of a key: all but the last are directories (ending in kDirMarker or, in
// the tree layout, kSegmentMarker). InvalidArgument for an empty key, NameTooLong above
// kMaxKeyBytes.
Result<std::vector<std::string>> EncodeKey(std::string_view key, KeyLayout layout);

// Decodes one component (without its marker). nullopt if it holds bytes the encoder never
// writes or a malformed escape.
std::optional<std::string> DecodeComponent(std::string_view component);
// The same, appended to *out (no allocation when it has room); false (out unspecified) where
// DecodeComponent gives nullopt. For the listing's walk over every name of a directory.
bool DecodeComponentTo(std::string_view component, std::string* out);

// Components joined by '/'.
std::string JoinPath(const std::vector<std::string>& components);

}  // namespace kvfs::dirstore
