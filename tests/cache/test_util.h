// Helpers shared by the cache and read-path tests: temporary directories and file content.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/posix_io.h"
#include "cache/chunk_cache.h"

namespace kvfs::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its content at destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& base = "") {
    std::string root = base;
    if (root.empty()) {
      const char* t = getenv("TMPDIR");
      root = t != nullptr ? t : "/tmp";
    }
    std::string tmpl = root + "/kvfs-cache-test-XXXXXX";
    char* p = mkdtemp(tmpl.data());
    EXPECT_NE(p, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Deterministic pseudo-random bytes, different per seed.
inline std::string Pattern(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint64_t x = 0x9E3779B97F4A7C15ULL * (seed + 1);
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}

inline std::string ReadAll(int fd, uint64_t size) {
  std::string s(size, '\0');
  Result<size_t> r = PreadFull(fd, s.data(), size, 0, "test file");
  s.resize(r.ok() ? *r : 0);
  return s;
}

inline void WriteFile(const std::string& path, const std::string& data) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  close(fd);
}

// Fills key with data through StartFill / pwrite / Commit.
inline Status Fill(ChunkCache* cache, const std::string& key, const std::string& data,
                   const std::string& etag = "e1") {
  KVFS_ASSIGN_OR_RETURN(FillRef f, cache->StartFill(key, data.size(), etag));
  KVFS_RETURN_IF_ERROR(PwriteFull(f.fd(), data.data(), data.size(), 0, "fill of " + key));
  KVFS_ASSIGN_OR_RETURN(EntryRef e, f.Commit());
  return Status::OK();
}

}  // namespace kvfs::testing
