// RefreshingCredentialProvider: refreshed before expiry in the background, never blocking Get(),
// never handing out expired credentials; the chain's error lists every source tried.
#include "objstore/s3/credential_provider.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "objstore/s3/credential_sources.h"

namespace kvfs::s3 {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

RefreshingCredentialProvider::Options Fast() {
  RefreshingCredentialProvider::Options o;
  o.retry_min = milliseconds(20);
  o.retry_max = milliseconds(50);
  return o;
}

TEST(RefreshingCredentialProviderTest, RefreshesBeforeExpiry) {
  std::atomic<int> fetches{0};
  auto fetch = [&]() -> Result<TemporaryCredentials> {
    const int n = ++fetches;
    TemporaryCredentials t;
    t.creds = {"AK" + std::to_string(n), "secret", "token" + std::to_string(n), ""};
    t.expiration = system_clock::now() + milliseconds(1000);
    return t;
  };
  auto p = RefreshingCredentialProvider::Create("test source", fetch, Fast());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ((*p)->Get()->access_key_id, "AK1");
  EXPECT_EQ((*p)->Get()->source, "test source");
  // Refreshed halfway through each 1 s lifetime: over 2.5 s every Get() succeeds.
  const auto end = system_clock::now() + milliseconds(2500);
  int gets = 0;
  while (system_clock::now() < end) {
    Result<S3Credentials> c = (*p)->Get();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    gets++;
    std::this_thread::sleep_for(milliseconds(5));
  }
  EXPECT_GE((*p)->refreshes(), 2u);
  EXPECT_NE((*p)->Get()->access_key_id, "AK1");
  EXPECT_GT(gets, 50);
}

TEST(RefreshingCredentialProviderTest, FailedRefreshKeepsValidCredentialsThenRefusesExpired) {
  std::atomic<bool> revoked{false};
  auto fetch = [&]() -> Result<TemporaryCredentials> {
    if (revoked) return Status::PermissionDenied("role detached");
    TemporaryCredentials t;
    t.creds = {"AK", "secret", "", ""};
    t.expiration = system_clock::now() + milliseconds(300);
    return t;
  };
  auto p = RefreshingCredentialProvider::Create("instance role r", fetch, Fast());
  ASSERT_TRUE(p.ok());
  revoked = true;
  EXPECT_TRUE((*p)->Get().ok()) << "still valid: the failed refresh does not drop them";
  std::this_thread::sleep_for(milliseconds(450));
  Result<S3Credentials> c = (*p)->Get();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(c.status().message().find("instance role r"), std::string::npos);
  EXPECT_NE(c.status().message().find("role detached"), std::string::npos);
  revoked = false;  // the role is back: the retries (every 50 ms here) pick it up
  const auto deadline = system_clock::now() + std::chrono::seconds(10);
  while (!(*p)->Get().ok() && system_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE((*p)->Get().ok());
}

TEST(RefreshingCredentialProviderTest, FirstFetchErrorNamesTheSource) {
  auto p = RefreshingCredentialProvider::Create(
      "web identity (arn:r)",
      []() -> Result<TemporaryCredentials> {
        return Status::PermissionDenied("InvalidIdentityToken: bad");
      },
      Fast());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(p.status().message().find("web identity (arn:r)"), std::string::npos);
  EXPECT_NE(p.status().message().find("InvalidIdentityToken"), std::string::npos);
}

TEST(CredentialProcessTest, FailuresNameTheProfileNotTheCommand) {
  const std::string what = "credential_process of profile p";
  Result<TemporaryCredentials> r = ProcessFetch("exit 3 # hunter2", what, 10'000)();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(r.status().message().find(what + " failed (exit status 3)"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(r.status().message().find("hunter2"), std::string::npos) << "the command line";
  r = ProcessFetch("echo not json", what, 10'000)();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("\"Version\": 1"), std::string::npos);
  r = ProcessFetch(R"(echo '{"Version": 1, "AccessKeyId": "AK", "SecretAccessKey": "s"}')", what,
                   10'000)();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->creds.access_key_id, "AK");
  EXPECT_EQ(r->creds.source, what);
  EXPECT_EQ(r->expiration, SystemTime::max()) << "no Expiration: never expires";
}

// A command that never answers is killed with everything it started, and the error names the
// setting; a helper that keeps the output open is killed too.
TEST(CredentialProcessTest, HungCommandIsKilledWithItsGroup) {
  const std::string pidfile = ::testing::TempDir() + "/kvfs-credproc-child";
  unlink(pidfile.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  Result<TemporaryCredentials> r = ProcessFetch("sleep 300 & echo $! > " + pidfile + "; wait",
                                                "credential_process of profile p", 1'000)();
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("did not answer within 1 s "
                                      "(credential_process_timeout_secs)"),
            std::string::npos)
      << r.status().message();
  EXPECT_LT(took, std::chrono::seconds(5));
  FILE* f = fopen(pidfile.c_str(), "r");
  ASSERT_NE(f, nullptr);
  int child = 0;
  ASSERT_EQ(fscanf(f, "%d", &child), 1);
  fclose(f);
  // The sleep was in the command's process group: gone (or a zombie of init's) by now.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string line;
    gone = !std::getline(stat, line) || line.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "the command's child " << child << " survived";
}

TEST(CredentialChainTest, RoleProfileWithoutASourceSaysWhatIsMissing) {
  const std::string config = ::testing::TempDir() + "/kvfs-role-config";
  FILE* f = fopen(config.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs(
      "[profile r]\nrole_arn = arn:aws:iam::1:role/x\n\n"
      "[profile chained]\nrole_arn = arn:aws:iam::1:role/y\nsource_profile = r\n",
      f);
  fclose(f);
  for (const char* v : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_WEB_IDENTITY_TOKEN_FILE",
                        "AWS_ROLE_ARN"}) {
    unsetenv(v);
  }
  setenv("AWS_CONFIG_FILE", config.c_str(), 1);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  setenv("AWS_PROFILE", "r", 1);
  Result<std::shared_ptr<CredentialProvider>> p = ResolveCredentialProvider(S3Options{});
  setenv("AWS_PROFILE", "chained", 1);
  Result<std::shared_ptr<CredentialProvider>> chained = ResolveCredentialProvider(S3Options{});
  unsetenv("AWS_PROFILE");
  unsetenv("AWS_CONFIG_FILE");
  unsetenv("AWS_SHARED_CREDENTIALS_FILE");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("profile r: role_arn needs source_profile or "
                                      "credential_source"),
            std::string::npos)
      << p.status().message();
  ASSERT_FALSE(chained.ok());
  EXPECT_NE(chained.status().message().find("chained roles are not supported"), std::string::npos)
      << chained.status().message();
}

TEST(CredentialChainTest, NothingConfiguredListsEverySourceTried) {
  for (const char* v :
       {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"}) {
    unsetenv(v);
  }
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  Result<std::shared_ptr<CredentialProvider>> p = ResolveCredentialProvider(S3Options{});
  unsetenv("AWS_EC2_METADATA_DISABLED");
  unsetenv("AWS_SHARED_CREDENTIALS_FILE");
  unsetenv("AWS_CONFIG_FILE");
  ASSERT_FALSE(p.ok());
  const std::string& m = p.status().message();
  for (const char* s : {"environment", "web identity", "/nonexistent/credentials", "container",
                        "AWS_EC2_METADATA_DISABLED"}) {
    EXPECT_NE(m.find(s), std::string::npos) << s;
  }
}

TEST(CredentialChainTest, EnvironmentKeysComeFirst) {
  setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
  setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/token", 1);
  setenv("AWS_ROLE_ARN", "arn:aws:iam::1:role/r", 1);
  Result<std::shared_ptr<CredentialProvider>> p = ResolveCredentialProvider(S3Options{});
  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  unsetenv("AWS_WEB_IDENTITY_TOKEN_FILE");
  unsetenv("AWS_ROLE_ARN");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ((*p)->source(), "environment");
  EXPECT_EQ((*p)->Get()->access_key_id, "AKENV");
}

}  // namespace
}  // namespace kvfs::s3
