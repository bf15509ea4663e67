// JsonObject: the top-level members of a small JSON object, as the credential endpoints answer
// (instance metadata, container credentials, credential_process output: flat objects of strings
// and a version number). Parsed with nlohmann/json in json_object.cc only: its templates cost
// ~30 s of compile time under the sanitizers in every file that includes it.
// Thread-safety: immutable after Parse; safe to read from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace kvfs::s3 {

class JsonObject {
 public:
  // The object in `text`, or nullopt when `text` is not valid JSON or not an object.
  static std::optional<JsonObject> Parse(const std::string& text);

  bool Has(const std::string& key) const { return keys_.count(key) > 0; }
  // The member's string value; empty when it is absent or not a string.
  std::string String(const std::string& key) const;
  // The member's integer value; nullopt when it is absent or not an integer.
  std::optional<int64_t> Integer(const std::string& key) const;

 private:
  std::map<std::string, std::string> strings_;
  std::map<std::string, int64_t> integers_;
  std::set<std::string> keys_;  // every member's name, whatever its type
};

}  // namespace kvfs::s3
