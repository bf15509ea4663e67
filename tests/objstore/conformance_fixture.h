// The fixture of the object-store conformance tests: the same test bodies run against every
// store kind (see store_under_test.h), instantiated in conformance_test.cc.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "objstore/object_store.h"
#include "tests/objstore/store_under_test.h"

namespace kvfs::testing {

class ConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  ConformanceTest() : sut_(GetParam()) {}
  void SetUp() override { KVFS_OPEN_STORE_OR_SKIP(sut_); }

  ObjectStore& store() { return *sut_.store(); }
  bool is_s3() const { return sut_.kind() == "s3"; }

  // Deterministic pseudo-random bytes.
  static std::string RandomBytes(size_t n, uint64_t seed);

  Result<ObjectInfo> PutString(const std::string& key, const std::string& data,
                               PutOptions opts = {});
  // Reads [offset, offset+length) (length kToEnd: to the end; the size comes from Head).
  Result<std::string> GetString(const std::string& key, uint64_t offset = 0,
                                uint64_t length = GetRequest::kToEnd);
  // Puts all objects with asynchronous PUTs, at most `inflight` at once; first error wins.
  Status PutMany(const std::vector<std::pair<std::string, std::string>>& objects,
                 int inflight = 32);
  // Every page of a listing; keys and common prefixes in the order returned. Fails the test
  // if a page has more than max_keys entries or a truncated page has no token.
  struct Listing {
    std::vector<std::string> keys;
    std::vector<std::string> prefixes;
    std::vector<std::string> entries;  // keys and prefixes, in page order
    int pages = 0;
  };
  Result<Listing> ListAll(ListRequest req);

  StoreUnderTest sut_;
};

}  // namespace kvfs::testing
