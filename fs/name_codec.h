// NameCodec: the reversible mapping between file names and object keys.
//
// A name component is encoded byte by byte: ASCII letters, digits and "-_.@" stay literal (chunk
// names stay readable in the bucket), every other byte becomes "%XX" (upper-case hex). Decoding
// accepts only the canonical encoding (decode(k) re-encodes to exactly k), so the mapping is a
// bijection between legal names and the keys kvfs shows; keys written by other tools appear when
// they are canonical, and are hidden otherwise (a non-canonical key has no name that maps to it).
//
// Key layout: key_prefix + [fanout "/"] + enc(dir1) "/" ... enc(name). With fan-out (N hex chars
// of a stable hash of the encoded name) the namespace is flat: only names directly under the
// root exist; the fan-out directory is invisible to users.
//
// Limits: a name of more than 255 bytes or a key of more than 1024 bytes is kNameTooLong.
//
// Thread-safe: immutable after construction.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kvfs {

class NameCodec {
 public:
  static constexpr size_t kMaxNameBytes = 255;
  static constexpr size_t kMaxKeyBytes = 1024;

  // key_prefix: "" or ending in '/'. fanout_hex_chars: 0 (off) .. 16.
  NameCodec(std::string key_prefix, int fanout_hex_chars);

  // OK for a legal file name: non-empty, not "." or "..", no '/' or NUL, at most 255 bytes.
  static Status ValidateName(std::string_view name);
  static std::string EncodeComponent(std::string_view name);
  // The name for a canonical encoded component that decodes to a legal name; nullopt otherwise.
  static std::optional<std::string> DecodeComponent(std::string_view component);

  bool flat() const { return fanout_ > 0; }
  const std::string& key_prefix() const { return prefix_; }

  // Object key of the file at `path` (names from the root; non-empty). kNameTooLong when the key
  // would exceed the limit, kNotSupported for a nested path with fan-out on.
  Result<std::string> FileKey(const std::vector<std::string>& path) const;
  // Listing prefix of the directory at `path` (empty path: the root), ending in '/' unless it is
  // an empty key_prefix. With fan-out on only the root is valid.
  Result<std::string> DirPrefix(const std::vector<std::string>& path) const;
  // The fan-out component ("ab") for an encoded name; empty when fan-out is off.
  std::string FanoutOf(std::string_view encoded) const;

  // The user-visible name of a listed key inside the directory with prefix dir_prefix (flat
  // listing entries with fan-out, one-level entries without). nullopt for keys that are not a
  // valid entry: markers, undecodable names, a wrong fan-out component.
  std::optional<std::string> NameOfKey(std::string_view dir_prefix, std::string_view key) const;
  // Whether `key` is the key of some file (any depth; with fan-out, under its right fan-out
  // directory): what the bounded tier counts and may remove. Markers and hidden keys are not.
  bool NamesFile(std::string_view key) const;
  // The name of a common prefix ("dir_prefix" + enc + "/") returned by a delimited listing.
  std::optional<std::string> NameOfPrefix(std::string_view dir_prefix,
                                          std::string_view common_prefix) const;

 private:
  std::string prefix_;
  int fanout_;
};

}  // namespace kvfs
