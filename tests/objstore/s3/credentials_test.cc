#include "objstore/s3/credentials.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>

namespace kvfs::s3 {
namespace {

// Sets/unsets the AWS variables for one test and restores the previous environment after.
class CredentialsTest : public ::testing::Test {
 protected:
  static constexpr const char* kVars[] = {"AWS_ACCESS_KEY_ID",
                                          "AWS_SECRET_ACCESS_KEY",
                                          "AWS_SESSION_TOKEN",
                                          "AWS_PROFILE",
                                          "AWS_SHARED_CREDENTIALS_FILE",
                                          "AWS_CONFIG_FILE",
                                          "AWS_ENDPOINT_URL",
                                          "AWS_ENDPOINT_URL_S3",
                                          "AWS_CA_BUNDLE",
                                          "HOME"};

  void SetUp() override {
    for (const char* v : kVars) {
      const char* old = std::getenv(v);
      saved_[v] = old ? std::optional<std::string>(old) : std::nullopt;
      unsetenv(v);
    }
    char tmpl[] = "/tmp/kvfs-cred-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    setenv("HOME", dir_.c_str(), 1);  // no real ~/.aws leaks into the test
  }
  void TearDown() override {
    for (const auto& [k, v] : saved_) {
      if (v) {
        setenv(k.c_str(), v->c_str(), 1);
      } else {
        unsetenv(k.c_str());
      }
    }
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  std::string dir_;
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST_F(CredentialsTest, ExplicitWins) {
  setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
  S3Options o;
  o.credentials.access_key_id = "CFGKEY";
  o.credentials.secret_access_key = "cfgsecret";
  Result<S3Credentials> c = ResolveCredentials(o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key_id, "CFGKEY");
  EXPECT_EQ(c->source, "config");
}

TEST_F(CredentialsTest, EnvironmentWithSessionToken) {
  setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
  setenv("AWS_SESSION_TOKEN", "tok", 1);
  Result<S3Credentials> c = ResolveCredentials(S3Options{});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key_id, "ENVKEY");
  EXPECT_EQ(c->secret_access_key, "envsecret");
  EXPECT_EQ(c->session_token, "tok");
  EXPECT_EQ(c->source, "environment");
}

TEST_F(CredentialsTest, ProfileFromSharedCredentialsFile) {
  const std::string path = Write("creds",
                                 "[default]\naws_access_key_id = DEFKEY\n"
                                 "aws_secret_access_key = defsecret\n\n"
                                 "# comment\n[work]\naws_access_key_id=WORKKEY\n"
                                 "aws_secret_access_key=worksecret\naws_session_token = wt\n");
  setenv("AWS_SHARED_CREDENTIALS_FILE", path.c_str(), 1);
  Result<S3Credentials> c = ResolveCredentials(S3Options{});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "DEFKEY");
  EXPECT_NE(c->source.find("[default]"), std::string::npos);

  S3Options o;
  o.profile = "work";
  c = ResolveCredentials(o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key_id, "WORKKEY");
  EXPECT_EQ(c->session_token, "wt");

  setenv("AWS_PROFILE", "default", 1);  // AWS_PROFILE beats options.profile
  c = ResolveCredentials(o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->access_key_id, "DEFKEY");
}

TEST_F(CredentialsTest, ConfigFileProfileSectionAndHomeDefault) {
  ::mkdir((dir_ + "/.aws").c_str(), 0700);
  Write(".aws/config",
        "[profile x]\naws_access_key_id = CONFKEY\naws_secret_access_key = confsecret\n");
  setenv("AWS_PROFILE", "x", 1);
  Result<S3Credentials> c = ResolveCredentials(S3Options{});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "CONFKEY");
  EXPECT_NE(c->source.find(".aws/config"), std::string::npos);
}

TEST_F(CredentialsTest, NothingFoundListsWhatWasTried) {
  setenv("AWS_ACCESS_KEY_ID", "ONLYKEY", 1);
  Result<S3Credentials> c = ResolveCredentials(S3Options{});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kPermissionDenied);
  const std::string& m = c.status().message();
  EXPECT_NE(m.find("config"), std::string::npos) << m;
  EXPECT_NE(m.find("AWS_SECRET_ACCESS_KEY"), std::string::npos) << m;
  EXPECT_NE(m.find("profile 'default' in " + dir_ + "/.aws/credentials"), std::string::npos) << m;
  EXPECT_EQ(m.find("ONLYKEY"), std::string::npos) << m;
}

TEST_F(CredentialsTest, EndpointAndCaBundle) {
  S3Options o;
  o.region = "eu-west-1";
  EXPECT_EQ(ResolveEndpoint(o), "https://s3.eu-west-1.amazonaws.com");
  setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:7480", 1);
  EXPECT_EQ(ResolveEndpoint(o), "http://127.0.0.1:7480");
  o.endpoint = "http://other:9000";
  EXPECT_EQ(ResolveEndpoint(o), "http://other:9000");

  EXPECT_EQ(ResolveCaBundle(o), "");
  setenv("AWS_CA_BUNDLE", "/etc/ca.pem", 1);
  EXPECT_EQ(ResolveCaBundle(o), "/etc/ca.pem");
  o.ca_bundle = "/mine.pem";
  EXPECT_EQ(ResolveCaBundle(o), "/mine.pem");
}

}  // namespace
}  // namespace kvfs::s3
