// Fuzz target for fs/name_codec: keys come from the bucket (anyone with write access to it), names
// from the kernel. Properties checked on every input:
//  - DecodeComponent never crashes, and what it accepts is a legal name whose encoding is exactly
//    the input (the canonical-form bijection the header promises);
//  - a legal name round-trips: Decode(Encode(name)) == name, and through FileKey / NameOfKey;
//  - NameOfKey / NameOfPrefix of arbitrary keys never crash and only return legal names.
// Input: byte 0 picks the fan-out (0..16), the rest is split at the first '\n' into a key prefix
// part and the name/key under test.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fs/name_codec.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using kvfs::NameCodec;

void CheckDecoded(std::string_view input, const std::optional<std::string>& name) {
  if (!name) return;
  FUZZ_CHECK(NameCodec::ValidateName(*name).ok());
  FUZZ_CHECK(NameCodec::EncodeComponent(*name) == input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int fanout = data[0] % 17;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string prefix;
  std::string_view body = rest;
  if (size_t nl = rest.find('\n'); nl != std::string_view::npos) {
    prefix = std::string(rest.substr(0, nl));
    body = rest.substr(nl + 1);
    if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  }
  const NameCodec codec(prefix, fanout);

  // The body as a key component from the bucket.
  CheckDecoded(body, NameCodec::DecodeComponent(body));

  // The body as a file name from the kernel.
  if (NameCodec::ValidateName(body).ok()) {
    const std::string name(body);
    const std::string enc = NameCodec::EncodeComponent(name);
    const std::optional<std::string> back = NameCodec::DecodeComponent(enc);
    FUZZ_CHECK(back.has_value() && *back == name);
    kvfs::Result<std::string> key = codec.FileKey({name});
    if (key.ok()) {
      FUZZ_CHECK(key->size() < NameCodec::kMaxKeyBytes);
      kvfs::Result<std::string> dir = codec.DirPrefix({});
      FUZZ_CHECK(dir.ok());
      const std::optional<std::string> listed = codec.NameOfKey(*dir, *key);
      FUZZ_CHECK(listed.has_value() && *listed == name);
      if (!codec.flat()) {
        FUZZ_CHECK(codec.NameOfPrefix(*dir, *key + "/") == name);
      }
    } else {
      FUZZ_CHECK(key.status().code() == kvfs::StatusCode::kNameTooLong);
    }
  }

  // The body as a whole listed key (with prefix, fan-out and slashes anywhere).
  const std::optional<std::string> of_key = codec.NameOfKey(prefix, body);
  if (of_key) FUZZ_CHECK(NameCodec::ValidateName(*of_key).ok());
  const std::optional<std::string> of_prefix = codec.NameOfPrefix(prefix, body);
  if (of_prefix) FUZZ_CHECK(NameCodec::ValidateName(*of_prefix).ok());
  return 0;
}
