#include "objstore/s3/json_object.h"

#include <nlohmann/json.hpp>

namespace kvfs::s3 {

std::optional<JsonObject> JsonObject::Parse(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  JsonObject out;
  for (const auto& [key, value] : j.items()) {
    out.keys_.insert(key);
    if (value.is_string()) {
      out.strings_[key] = value.get<std::string>();
    } else if (value.is_number_integer()) {
      out.integers_[key] = value.get<int64_t>();
    }
  }
  return out;
}

std::string JsonObject::String(const std::string& key) const {
  auto it = strings_.find(key);
  return it == strings_.end() ? std::string() : it->second;
}

std::optional<int64_t> JsonObject::Integer(const std::string& key) const {
  auto it = integers_.find(key);
  if (it == integers_.end()) return std::nullopt;
  return it->second;
}

}  // namespace kvfs::s3
