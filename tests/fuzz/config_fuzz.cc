// Fuzz target for the config parser (src/config*.cc, src/cli.cc, src/mount_options.cc): YAML
// files and -o option strings come from users and fstab. Input: byte 0 picks the form (even: YAML
// text, odd: an -o string), the rest is the text. Parsing, validation and --dump-config must never
// crash, leak or throw (yaml-cpp's exceptions must not escape config_file.cc), whatever the text.
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "src/cli.h"
#include "src/config.h"
#include "tests/fuzz/fuzz_check.h"

// Unknown keys are logged as warnings: thousands per second would drown the fuzzer's output.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0) {
    kvfs::Result<kvfs::KvfsConfig> config = kvfs::ParseConfig(text, "fuzz.yaml");
    if (config.ok()) {
      (void)kvfs::ValidateConfig(*config);
      (void)kvfs::DumpConfig(*config);
    } else {
      FUZZ_CHECK(!config.status().message().empty());
    }
    return 0;
  }
  kvfs::CommandLine cmd;
  cmd.source = "s3://bucket/prefix";
  cmd.mountpoint = "/mnt/kvfs";
  if (!kvfs::ParseMountOptions(text, &cmd).ok()) return 0;
  cmd.config_path.clear();  // never read files named by the input
  const auto no_env = [](const char*) -> const char* { return nullptr; };
  kvfs::Result<kvfs::KvfsConfig> config = kvfs::ResolveConfig(cmd, no_env);
  if (config.ok()) (void)kvfs::DumpConfig(*config);
  return 0;
}
