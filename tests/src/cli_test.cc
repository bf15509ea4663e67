// The command line: kvfs's own form, the form mount.fuse3 uses for an fstab line, and the
// precedence command line > config file > environment > defaults.
#include "src/cli.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "src/process_setup.h"

namespace kvfs {
namespace {

Result<CommandLine> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "kvfs");
  return ParseCommandLine(args);
}

std::string UsageError(std::vector<std::string> args) {
  auto cmd = Parse(std::move(args));
  EXPECT_FALSE(cmd.ok());
  if (cmd.ok()) return "(ok)";
  EXPECT_EQ(cmd.status().code(), StatusCode::kInvalidArgument);
  return cmd.status().message();
}

EnvLookup NoEnv() {
  return [](const char*) -> const char* { return nullptr; };
}

// A temporary config file, removed at the end of the test.
class TempConfig {
 public:
  explicit TempConfig(const std::string& text) {
    char name[] = "/tmp/kvfs_cli_test_XXXXXX";
    int fd = mkstemp(name);
    EXPECT_GE(fd, 0);
    close(fd);
    path_ = name;
    std::ofstream(path_) << text;
  }
  ~TempConfig() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(CommandLineTest, PlainMount) {
  auto cmd = Parse({"-f", "s3://bucket/prefix", "/mnt/kv"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_EQ(cmd->command, Command::kMount);
  EXPECT_EQ(cmd->source, "s3://bucket/prefix");
  EXPECT_EQ(cmd->mountpoint, "/mnt/kv");
  EXPECT_TRUE(cmd->foreground);
  EXPECT_FALSE(cmd->debug);
}

TEST(CommandLineTest, DebugImpliesForegroundAndClusteredFlags) {
  auto cmd = Parse({"-d", "file:///srv/store", "/mnt"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_TRUE(cmd->debug);
  EXPECT_TRUE(cmd->foreground);
  cmd = Parse({"-fs", "-ocache_size=1GiB", "file:///srv/store", "/mnt"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_TRUE(cmd->single_thread);
  ASSERT_EQ(cmd->settings.size(), 1u);
  EXPECT_EQ(cmd->settings[0], (std::pair<std::string, std::string>{"cache_size", "1GiB"}));
}

// fstab: s3://bucket/prefix /mnt/kv fuse.kvfs _netdev,config=/etc/kvfs/kvfs.yaml 0 0
// mount.fuse3 then runs: kvfs s3://bucket/prefix /mnt/kv -o rw,_netdev,config=/etc/kvfs/kvfs.yaml
TEST(CommandLineTest, MountFuse3Form) {
  auto cmd = Parse({"s3://bucket/prefix", "/mnt/kv", "-o",
                    "rw,_netdev,nofail,x-systemd.automount,x-systemd.requires=network-online."
                    "target,noauto,user,defaults,nosuid,nodev,config=/etc/kvfs/kvfs.yaml,"
                    "cache_dir=/dev/shm/kvfs,allow_other,chunk_sizes=8MiB:32MiB,fsname=kvfs"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_EQ(cmd->command, Command::kMount);
  EXPECT_EQ(cmd->source, "s3://bucket/prefix");
  EXPECT_EQ(cmd->mountpoint, "/mnt/kv");
  EXPECT_FALSE(cmd->foreground);
  EXPECT_EQ(cmd->config_path, "/etc/kvfs/kvfs.yaml");
  EXPECT_EQ(cmd->fuse_options, (std::vector<std::string>{"rw", "nosuid", "nodev", "fsname=kvfs"}));
  EXPECT_EQ(cmd->ignored_options,
            (std::vector<std::string>{"_netdev", "nofail", "x-systemd.automount",
                                      "x-systemd.requires=network-online.target", "noauto", "user",
                                      "defaults"}));
  std::vector<std::pair<std::string, std::string>> want = {
      {"cache_dir", "/dev/shm/kvfs"}, {"allow_other", "true"}, {"chunk_sizes", "8MiB:32MiB"}};
  EXPECT_EQ(cmd->settings, want);
}

TEST(CommandLineTest, RoSetsReadOnlyAndPassesThrough) {
  auto cmd = Parse({"s3://b", "/m", "-o", "ro"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(cmd->fuse_options, std::vector<std::string>{"ro"});
  auto config = ResolveConfig(*cmd, NoEnv());
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_TRUE(config->fuse.read_only);
}

TEST(CommandLineTest, EscapedCommaInOptionValue) {
  auto cmd = Parse({"s3://b", "/m", "-o", "temp_patterns=*.tmp\\,*.part,rw"});
  ASSERT_TRUE(cmd.ok());
  ASSERT_EQ(cmd->settings.size(), 1u);
  EXPECT_EQ(cmd->settings[0].second, "*.tmp,*.part");
}

TEST(CommandLineTest, LongOptions) {
  auto cmd = Parse({"--config", "/a.yaml", "--foreground", "--option=fanout=2", "s3://b", "/m"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_EQ(cmd->config_path, "/a.yaml");
  EXPECT_TRUE(cmd->foreground);
  cmd = Parse({"--config=/b.yaml", "s3://b", "/m"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(cmd->config_path, "/b.yaml");
}

TEST(CommandLineTest, HelpVersionAndDumpConfig) {
  EXPECT_EQ(Parse({"--help"})->command, Command::kHelp);
  EXPECT_EQ(Parse({"-h", "whatever"})->command, Command::kHelp);
  EXPECT_EQ(Parse({"--version"})->command, Command::kVersion);
  EXPECT_EQ(Parse({"-V"})->command, Command::kVersion);
  auto cmd = Parse({"--dump-config", "--config", "/x.yaml"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_TRUE(cmd->dump_config);
  EXPECT_NE(UsageText("kvfs").find("Usage: kvfs [options] [SOURCE] MOUNTPOINT"), std::string::npos);
  EXPECT_NE(UsageText("kvfs").find("cache_size"), std::string::npos);
  EXPECT_EQ(VersionText().rfind("kvfs ", 0), 0u);
}

TEST(CommandLineTest, Subcommands) {
  auto cmd = Parse({"warm", "/mnt/kv", "a.pt", "b.pt"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(cmd->command, Command::kWarm);
  EXPECT_EQ(cmd->mountpoint, "/mnt/kv");
  EXPECT_EQ(cmd->names, (std::vector<std::string>{"a.pt", "b.pt"}));
  cmd = Parse({"stats", "/mnt/kv"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(cmd->command, Command::kStats);
  EXPECT_EQ(cmd->mountpoint, "/mnt/kv");
  EXPECT_EQ(UsageError({"stats"}), "usage: kvfs stats MOUNTPOINT");
  cmd = Parse({"sync", "/mnt/kv"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(cmd->command, Command::kSync);
  EXPECT_EQ(cmd->mountpoint, "/mnt/kv");
  EXPECT_EQ(UsageError({"sync"}), "usage: kvfs sync MOUNTPOINT");
  EXPECT_EQ(UsageError({"warm", "/mnt"}), "usage: kvfs warm [options] MOUNTPOINT NAME...|-");
}

TEST(CommandLineTest, BadUsage) {
  EXPECT_EQ(UsageError({}), "missing SOURCE and MOUNTPOINT");
  EXPECT_EQ(UsageError({"s3://b"}), "missing MOUNTPOINT");
  EXPECT_EQ(UsageError({"s3://b", "/m", "/x"}), "too many arguments; expected SOURCE MOUNTPOINT");
  EXPECT_EQ(UsageError({"-x", "s3://b", "/m"}), "unknown option '-x'");
  EXPECT_EQ(UsageError({"--frobnicate", "s3://b", "/m"}), "unknown option '--frobnicate'");
  EXPECT_EQ(UsageError({"s3://b", "/m", "-o"}), "option '-o' needs a value");
  EXPECT_EQ(UsageError({"--config"}), "option '--config' needs a value");
  EXPECT_EQ(UsageError({"s3://b", "/m", "-o", "frob=1"}),
            "unknown mount option 'frob' (see kvfs --help)");
  // The value of an unknown option is never echoed (it may be a misspelt secret).
  EXPECT_EQ(UsageError({"s3://b", "/m", "-o", "secret_acess_key=hunter2"}),
            "unknown mount option 'secret_acess_key' (see kvfs --help)");
  EXPECT_EQ(UsageError({"s3://b", "/m", "-o", "cache_size"}),
            "mount option 'cache_size' needs a value");
  EXPECT_EQ(UsageError({"s3://b", "/m", "-o", "config="}),
            "mount option 'config' needs a file: -o config=FILE");
}

TEST(ResolveConfigTest, BadValuesOnTheCommandLine) {
  auto cmd = Parse({"s3://b", "/m", "-o", "cache_size=12XB"});
  ASSERT_TRUE(cmd.ok());
  auto config = ResolveConfig(*cmd, NoEnv());
  EXPECT_EQ(config.status().message(),
            "command line: key 'cache_size': '12XB' is not a size (e.g. 8MiB, 64GiB or a byte "
            "count)");
  cmd = Parse({"http://b", "/m"});
  ASSERT_TRUE(cmd.ok());
  config = ResolveConfig(*cmd, NoEnv());
  EXPECT_EQ(
      config.status().message().rfind("command line: SOURCE: 'http://b' is not a supported", 0), 0u)
      << config.status().message();
}

TEST(ResolveConfigTest, Precedence) {
  TempConfig file(
      "cache_size: 2GiB\nfanout: 2\nregion: eu-west-3\nlog_level: error\n"
      "remote_url: s3://from-file\nkey_prefix: file-prefix\n");
  std::map<std::string, std::string> env = {{"KVFS_CACHE_SIZE", "1GiB"},
                                            {"KVFS_FANOUT", "1"},
                                            {"KVFS_MAX_INFLIGHT", "7"},
                                            {"AWS_REGION", "ap-south-1"}};
  EnvLookup lookup = [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };

  // Environment < file.
  auto cmd = Parse({"--config", file.path(), "--dump-config"});
  ASSERT_TRUE(cmd.ok());
  auto c = ResolveConfig(*cmd, lookup);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->cache.capacity, 2 * kGiB);  // file over environment
  EXPECT_EQ(c->s3.max_inflight, 7);        // environment over default
  EXPECT_EQ(c->s3.region, "eu-west-3");    // file over AWS_REGION
  EXPECT_EQ(c->s3.bucket, "from-file");
  EXPECT_EQ(c->key_prefix, "file-prefix/");
  EXPECT_EQ(c->config_files, std::vector<std::string>{file.path()});

  // Command line < nothing: SOURCE and -o override the file, -d the log level.
  cmd =
      Parse({"-d", "s3://from-cli/cli-prefix", "/m", "-o", "config=" + file.path() + ",fanout=4"});
  ASSERT_TRUE(cmd.ok());
  c = ResolveConfig(*cmd, lookup);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->fs.fanout_hex_chars, 4);
  EXPECT_EQ(c->cache.capacity, 2 * kGiB);
  EXPECT_EQ(c->s3.bucket, "from-cli");
  EXPECT_EQ(c->key_prefix, "cli-prefix/");
  EXPECT_EQ(c->log_level, "debug");

  // KVFS_CONFIG names the file when the command line does not.
  env["KVFS_CONFIG"] = file.path();
  cmd = Parse({"s3://b", "/m"});
  ASSERT_TRUE(cmd.ok());
  c = ResolveConfig(*cmd, lookup);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->fs.fanout_hex_chars, 2);
  EXPECT_EQ(c->log_level, "error");
}

// The systemd unit form: kvfs -f --config /etc/kvfs/mnt-kv.yaml /mnt/kv
TEST(ResolveConfigTest, SourceFromConfigFile) {
  TempConfig file("source: s3://from-file/p\n");
  auto cmd = Parse({"-f", "--config", file.path(), "/mnt/kv"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_EQ(cmd->mountpoint, "/mnt/kv");
  EXPECT_EQ(cmd->source, "");
  auto c = ResolveConfig(*cmd, NoEnv());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->s3.bucket, "from-file");
  EXPECT_EQ(c->key_prefix, "p/");

  cmd = Parse({"/mnt/kv"});
  ASSERT_TRUE(cmd.ok());
  c = ResolveConfig(*cmd, NoEnv());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().rfind("no SOURCE: ", 0), 0u) << c.status().message();
}

TEST(ResolveConfigTest, MissingConfigFileIsAnError) {
  auto cmd = Parse({"s3://b", "/m", "-o", "config=/nonexistent.yaml"});
  ASSERT_TRUE(cmd.ok());
  auto c = ResolveConfig(*cmd, NoEnv());
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("/nonexistent.yaml"), std::string::npos);
}

// Every config key and the documented environment variables appear in the man page.
TEST(DocumentationTest, ManPageCoversEveryKey) {
  std::ifstream in(KVFS_MAN_PAGE);
  ASSERT_TRUE(in.good()) << KVFS_MAN_PAGE;
  std::stringstream text;
  text << in.rdbuf();
  std::string man = text.str();
  for (const std::string& key : ConfigKeyNames()) {
    // roff escapes '_' not, but '-' is written "\-".
    std::string spelled;
    for (char ch : key) spelled += ch == '-' ? std::string("\\-") : std::string(1, ch);
    EXPECT_NE(man.find(spelled), std::string::npos) << "man page lacks key " << key;
  }
  for (const char* word : {"EINVAL", "EFBIG", "EIO", "ENOENT", "EEXIST", "ENAMETOOLONG", "ESTALE",
                           "EACCES", "ETIMEDOUT", "ENOTSUP", "KVFS_CONFIG", "fuse.kvfs",
                           "remote_url", "blocking_timeout_secs", "s3_max_inflight_reqs"}) {
    EXPECT_NE(man.find(word), std::string::npos) << "man page lacks " << word;
  }
}

// SOURCE goes into libfuse's option string as fsname: a comma in it must not start another option,
// and a backslash must not escape the character after it.
TEST(CommandLineTest, FuseOptionValuesAreEscapedForLibfuse) {
  EXPECT_EQ(EscapeFuseOptionValue("s3://b/p"), "s3://b/p");
  EXPECT_EQ(EscapeFuseOptionValue("s3://b/p,allow_other"), "s3://b/p\\,allow_other");
  EXPECT_EQ(EscapeFuseOptionValue("a\\,b"), "a\\\\\\,b");
  EXPECT_EQ(EscapeFuseOptionValue("trailing\\"), "trailing\\\\");
  // What kvfs's own -o parser unescaped (fsname=x\,allow_other) is escaped again for libfuse.
  auto cmd = Parse({"s3://b", "/m", "-o", "fsname=x\\,allow_other"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  ASSERT_EQ(cmd->fuse_options.size(), 1u);
  EXPECT_EQ(EscapeFuseOptionValue(cmd->fuse_options[0]), "fsname=x\\,allow_other");
}

// The daemon runs in "/" once it detaches: relative paths are taken from the directory kvfs was
// started in before that.
TEST(CommandLineTest, RelativePathsAreMadeAbsolute) {
  char saved[4096];
  ASSERT_NE(getcwd(saved, sizeof(saved)), nullptr);
  ASSERT_EQ(chdir("/tmp"), 0);
  auto cmd = Parse({"s3://b", "mnt/", "-o", "cache_dir=./c/../cache,ca_bundle=ca.pem"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  auto config = ResolveConfig(*cmd, NoEnv());
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ASSERT_TRUE(MakePathsAbsolute(&*cmd, &*config).ok());
  EXPECT_EQ(cmd->mountpoint, "/tmp/mnt");
  EXPECT_EQ(config->cache.dir, "/tmp/cache");
  EXPECT_EQ(config->s3.ca_bundle, "/tmp/ca.pem");
  // Absolute and unset paths stay as they are.
  auto abs = Parse({"s3://b", "/m"});
  ASSERT_TRUE(abs.ok());
  KvfsConfig defaults;
  ASSERT_TRUE(MakePathsAbsolute(&*abs, &defaults).ok());
  EXPECT_EQ(abs->mountpoint, "/m");
  EXPECT_EQ(defaults.cache.dir, "");
  ASSERT_EQ(chdir(saved), 0);
}

// -s as libfuse means it: one FUSE thread.
TEST(CommandLineTest, SingleThreadedMeansOneFuseThread) {
  auto cmd = Parse({"-s", "s3://b", "/m"});
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  auto config = ResolveConfig(*cmd, NoEnv());
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->fuse.max_threads, 1);
  cmd = Parse({"s3://b", "/m"});
  ASSERT_TRUE(cmd.ok());
  EXPECT_EQ(ResolveConfig(*cmd, NoEnv())->fuse.max_threads, KvfsConfig{}.fuse.max_threads);
}

// The daemon is not dumpable unless core_dumps says so (a core would show the credentials it
// holds): checked in a child, since it cannot be undone.
TEST(ProcessSetupTest, ProtectMemoryTurnsOffDumps) {
  for (bool core_dumps : {false, true}) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ProtectMemory(core_dumps);
      _exit(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == (core_dumps ? 1 : 0) ? 0 : 1);
    }
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "core_dumps " << core_dumps;
  }
}

}  // namespace
}  // namespace kvfs
