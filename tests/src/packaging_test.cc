// The shipped examples stay valid: the example config loads without warnings and states the
// defaults; every fstab example line parses in the form mount.fuse3 passes it.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "src/cli.h"
#include "src/config.h"
#include "tests/src/log_capture.h"

namespace kvfs {
namespace {

const std::string kDir = KVFS_PACKAGING_DIR;

TEST(PackagingTest, ExampleConfigLoadsAndStatesTheDefaults) {
  LogCapture log;
  auto c = LoadConfigFile(kDir + "/kvfs.yaml.example");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(log.text(), "");
  KvfsConfig defaults;
  defaults.config_files = c->config_files;
  EXPECT_EQ(DumpConfig(*c), DumpConfig(defaults));
}

// One table (src/config_keys.cc) drives the keys; the example config shows every one of them
// (the man page is checked the same way in cli_test.cc), so adding a key without documenting it
// fails here.
TEST(PackagingTest, ExampleConfigShowsEveryKey) {
  std::ifstream in(kDir + "/kvfs.yaml.example");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string yaml = "\n" + text.str();
  // Shown through another spelling: the bucket is part of `source`; path_style is `addressing`.
  const std::vector<std::string> shown_elsewhere = {"bucket", "path_style"};
  for (const std::string& key : ConfigKeyNames()) {
    if (std::find(shown_elsewhere.begin(), shown_elsewhere.end(), key) != shown_elsewhere.end()) {
      continue;
    }
    const bool shown = yaml.find("\n" + key + ":") != std::string::npos ||
                       yaml.find("\n#" + key + ":") != std::string::npos ||
                       yaml.find("\n# " + key + ":") != std::string::npos;
    EXPECT_TRUE(shown) << "packaging/kvfs.yaml.example lacks key " << key;
  }
}

TEST(PackagingTest, FstabExamplesParse) {
  std::ifstream in(kDir + "/fstab.example");
  ASSERT_TRUE(in.good());
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    if (line.rfind("#s3://", 0) == 0 || line.rfind("#file://", 0) == 0) line.erase(0, 1);
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string source, mountpoint, type, options;
    fields >> source >> mountpoint >> type >> options;
    EXPECT_EQ(type, "fuse.kvfs") << line;
    // What mount.fuse3 runs for this line.
    auto cmd = ParseCommandLine(
        std::vector<std::string>{"kvfs", source, mountpoint, "-o", "rw," + options});
    ASSERT_TRUE(cmd.ok()) << line << ": " << cmd.status().ToString();
    EXPECT_EQ(cmd->source, source);
    EXPECT_EQ(cmd->mountpoint, mountpoint);
    ++lines;
  }
  EXPECT_GE(lines, 4);
}

// The unit lets the daemon hold many descriptors: kvfs raises its soft limit to the hard one, and
// systemd's default hard limit is too low for a busy engine.
TEST(PackagingTest, ServiceSetsTheOpenFileLimit) {
  std::ifstream in(kDir + "/kvfs@.service");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\nLimitNOFILE=1048576\n"), std::string::npos) << text.str();
}

}  // namespace
}  // namespace kvfs
