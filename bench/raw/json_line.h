// A one-line JSON object builder for benchmark results (flat: strings and numbers only).
// Not thread-safe: build on one thread.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

namespace kvbench {

class JsonLine {
 public:
  JsonLine() {
    double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    Num("ts", now);
  }

  JsonLine& Str(const char* key, const std::string& v) {
    Key(key);
    s_ += '"';
    for (char c : v) {
      if (c == '"' || c == '\\') {
        s_ += '\\';
        s_ += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        s_ += buf;
      } else {
        s_ += c;
      }
    }
    s_ += '"';
    return *this;
  }

  template <typename T>
  JsonLine& Num(const char* key, T v) {
    Key(key);
    double d = static_cast<double>(v);
    if (!std::isfinite(d)) {
      s_ += "null";
      return *this;
    }
    char buf[48];
    if (d == std::floor(d) && std::fabs(d) < 1e15) {
      std::snprintf(buf, sizeof buf, "%.0f", d);
    } else if (std::fabs(d) >= 1e4) {
      std::snprintf(buf, sizeof buf, "%.3f", d);
    } else {
      std::snprintf(buf, sizeof buf, "%.6g", d);
    }
    s_ += buf;
    return *this;
  }

  std::string Done() const { return s_ + "}"; }

 private:
  void Key(const char* k) {
    s_ += s_.size() > 1 ? ", \"" : "\"";
    s_ += k;
    s_ += "\": ";
  }
  std::string s_ = "{";
};

}  // namespace kvbench
