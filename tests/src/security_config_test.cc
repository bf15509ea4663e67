// Warnings about unsafe settings: a secret on the command line or in a config file other users can
// read, a plain-http endpoint, verify_tls=false. Each names the setting or file and the fix, is
// logged once, and never holds the secret itself; --dump-config keeps redacting.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "objstore/s3/s3_url.h"
#include "src/cli.h"
#include "src/config.h"
#include "src/config_warnings.h"
#include "tests/src/log_capture.h"

namespace kvfs {
namespace {

constexpr const char* kSecret = "hunter2SECRET";
constexpr const char* kToken = "tok3nTOKEN";

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) n++;
  return n;
}

void ExpectNoSecrets(const std::string& text) {
  EXPECT_EQ(text.find(kSecret), std::string::npos) << text;
  EXPECT_EQ(text.find(kToken), std::string::npos) << text;
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += s + "\n";
  return out;
}

Result<KvfsConfig> Resolve(std::vector<std::string> args,
                           std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), "kvfs");
  auto cmd = ParseCommandLine(args);
  if (!cmd.ok()) return cmd.status();
  return ResolveConfig(*cmd, [env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

// A config file with `text` and `mode`, removed at the end of the test.
class ModeFile {
 public:
  ModeFile(const std::string& text, mode_t mode) {
    char name[] = "/tmp/kvfs_security_test_XXXXXX";
    int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    close(fd);
    path_ = name;
    std::ofstream(path_) << text;
    EXPECT_EQ(chmod(path_.c_str(), mode), 0);
  }
  ~ModeFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(SecretWarningTest, SecretOnTheCommandLineWarnsOncePerKey) {
  auto c = Resolve({"s3://b", "/m", "-o",
                    std::string("secret_access_key=") + kSecret + ",session_token=" + kToken +
                        ",access_key_id=AKID",
                    "-o", std::string("secret_access_key=") + kSecret});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const std::string all = Joined(c->warnings);
  ASSERT_EQ(c->warnings.size(), 2u) << all;
  EXPECT_NE(c->warnings[0].find("secret_access_key is given on the command line"),
            std::string::npos);
  EXPECT_NE(c->warnings[0].find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
  EXPECT_NE(c->warnings[0].find("~/.aws/credentials"), std::string::npos);
  EXPECT_NE(c->warnings[1].find("session_token is given on the command line"), std::string::npos);
  EXPECT_NE(c->warnings[1].find("AWS_SESSION_TOKEN"), std::string::npos);
  EXPECT_EQ(all.find("access_key_id"), std::string::npos) << all;  // not a secret
  ExpectNoSecrets(all);

  LogCapture log;
  LogSecurityWarnings(*c);
  EXPECT_EQ(Count(log.text(), "warning: kvfs: secret_access_key is given"), 1u) << log.text();
  EXPECT_EQ(Count(log.text(), "warning: kvfs: session_token is given"), 1u) << log.text();
  ExpectNoSecrets(log.text());
}

TEST(SecretWarningTest, SecretsFromTheEnvironmentDoNotWarn) {
  auto c = Resolve({"s3://b", "/m"}, {{"KVFS_SECRET_ACCESS_KEY", kSecret}});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->warnings.empty()) << Joined(c->warnings);
}

TEST(SecretWarningTest, ConfigFileReadableByOthersWarns) {
  ModeFile world(std::string("source: s3://b\nsecret_access_key: ") + kSecret + "\n", 0644);
  auto c = Resolve({"--config", world.path(), "/m"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->warnings.size(), 1u) << Joined(c->warnings);
  const std::string& w = c->warnings[0];
  EXPECT_NE(w.find("config file " + world.path() + " holds secret_access_key"), std::string::npos)
      << w;
  EXPECT_NE(w.find("every local user (mode 0644)"), std::string::npos) << w;
  EXPECT_NE(w.find("chmod 600 " + world.path()), std::string::npos) << w;
  ExpectNoSecrets(w);

  // LMCache's spelling is named as written; group-readable is said so.
  ModeFile group(
      std::string("remote_url: s3://b\nextra_config:\n  aws_session_token: ") + kToken + "\n",
      0640);
  c = Resolve({"--config", group.path(), "/m"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->warnings.size(), 1u) << Joined(c->warnings);
  EXPECT_NE(c->warnings[0].find("holds extra_config.aws_session_token"), std::string::npos)
      << c->warnings[0];
  EXPECT_NE(c->warnings[0].find("readable by its group (mode 0640)"), std::string::npos)
      << c->warnings[0];
  ExpectNoSecrets(c->warnings[0]);
}

TEST(SecretWarningTest, PrivateConfigFileOrNoSecretsDoesNotWarn) {
  ModeFile owner_only(std::string("source: s3://b\nsecret_access_key: ") + kSecret + "\n", 0600);
  auto c = Resolve({"--config", owner_only.path(), "/m"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->warnings.empty()) << Joined(c->warnings);

  ModeFile no_secret("source: s3://b\naccess_key_id: AKID\nsecret_access_key: \"\"\n", 0644);
  c = Resolve({"--config", no_secret.path(), "/m"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->warnings.empty()) << Joined(c->warnings);
}

TEST(SecretWarningTest, DumpConfigRedactsAndRepeatsTheWarnings) {
  ModeFile world(std::string("source: s3://b\nsession_token: ") + kToken + "\n", 0604);
  auto c = Resolve({"--dump-config", "--config", world.path(), "-o",
                    std::string("secret_access_key=") + kSecret});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const std::string dump = DumpConfig(*c);
  ExpectNoSecrets(dump);
  EXPECT_NE(dump.find("secret_access_key: <redacted>"), std::string::npos) << dump;
  EXPECT_NE(dump.find("session_token: <redacted>"), std::string::npos) << dump;
  EXPECT_NE(dump.find("# warning: secret_access_key is given on the command line"),
            std::string::npos)
      << dump;
  EXPECT_NE(dump.find("# warning: config file " + world.path() + " holds session_token"),
            std::string::npos)
      << dump;
  // The dump (comments included) still loads as a config file.
  EXPECT_TRUE(ParseConfig(dump, "dump").ok());
}

TEST(TransportWarningTest, PlainHttpEndpoint) {
  auto c = Resolve({"s3://b", "/m", "-o", "endpoint=http://store.example:9000"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto w = TransportWarnings(*c);
  ASSERT_EQ(w.size(), 1u) << Joined(w);
  EXPECT_NE(w[0].find("endpoint http://store.example:9000 is plain http://"), std::string::npos)
      << w[0];
  EXPECT_NE(w[0].find("session token"), std::string::npos) << w[0];

  // No scheme, disable_tls: http too. s3://host:port/bucket sets the endpoint the same way.
  c = Resolve({"s3://b", "/m", "-o", "endpoint=store.example:9000,disable_tls"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(TransportWarnings(*c).size(), 1u);
  EXPECT_NE(TransportWarnings(*c)[0].find("http://store.example:9000"), std::string::npos);

  LogCapture log;
  LogSecurityWarnings(*c);
  EXPECT_EQ(Count(log.text(), "is plain http://"), 1u) << log.text();
}

TEST(TransportWarningTest, VerifyTlsOff) {
  auto c = Resolve({"s3://b", "/m", "-o", "endpoint=https://store.example,verify_tls=false"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto w = TransportWarnings(*c);
  ASSERT_EQ(w.size(), 1u) << Joined(w);
  EXPECT_NE(w[0].find("verify_tls is false"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("ca_bundle"), std::string::npos) << w[0];
}

TEST(TransportWarningTest, HttpsAndLocalDirectoriesAreQuiet) {
  auto c = Resolve({"s3://b", "/m", "-o", "endpoint=https://store.example"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(SecurityWarnings(*c).empty()) << Joined(SecurityWarnings(*c));
  c = Resolve({"file:///var/tmp/store", "/m", "-o", "verify_tls=false"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(SecurityWarnings(*c).empty()) << Joined(SecurityWarnings(*c));
  LogCapture log;
  LogSecurityWarnings(*c);
  EXPECT_EQ(log.text(), "");
}

// /metrics on every interface has no TLS and no authentication: warned.
TEST(TransportWarningTest, MetricsOnEveryInterface) {
  auto c = Resolve({"s3://b", "/m", "-o", "metrics_listen=0.0.0.0:9464"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NE(Joined(SecurityWarnings(*c))
                .find("metrics_listen 0.0.0.0:9464 serves /metrics on "
                      "every interface"),
            std::string::npos)
      << Joined(SecurityWarnings(*c));
  c = Resolve({"s3://b", "/m", "-o", "metrics_listen=127.0.0.1:9464"});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(Joined(SecurityWarnings(*c)).find("metrics_listen"), std::string::npos);
}

// A password in the endpoint URL never reaches --dump-config or messages.
TEST(SecretWarningTest, EndpointUserinfoIsRedacted) {
  EXPECT_EQ(s3::RedactEndpoint("http://user:" + std::string(kSecret) + "@minio:9000/x"),
            "http://<redacted>@minio:9000/x");
  EXPECT_EQ(s3::RedactEndpoint("http://minio:9000/a@b"), "http://minio:9000/a@b");
  EXPECT_EQ(s3::RedactEndpoint("minio:9000"), "minio:9000");
  auto c = Resolve({"s3://b", "/m", "-o",
                    "endpoint=http://user:" + std::string(kSecret) + "@store.example:9000"});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const std::string dump = DumpConfig(*c);
  ExpectNoSecrets(dump);
  EXPECT_NE(dump.find("http://<redacted>@store.example:9000"), std::string::npos) << dump;
  ExpectNoSecrets(Joined(SecurityWarnings(*c)));
  auto ep = s3::ParseEndpoint(c->s3.endpoint, false);
  ASSERT_FALSE(ep.ok());
  ExpectNoSecrets(ep.status().message());
}

}  // namespace
}  // namespace kvfs
