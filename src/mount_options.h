// The grammar of `-o` option strings, as mount(8), fstab and mount.fuse3 write them: which
// options are kvfs settings, which go to libfuse unchanged, which only mean something to mount or
// systemd (ignored), and how a value is escaped on its way into libfuse's own option string.
// The command line (src/cli.h) hands each -o string here.
//
// Thread-safety: pure functions over their arguments (reentrant).
#pragma once

#include <string>

#include "base/status.h"
#include "src/command_line.h"

namespace kvfs {

// Applies one -o option string ("rw,config=/etc/kvfs.yaml,cache_size=64GiB") onto `cmd`.
// Commas inside a value can be escaped as "\,".
Status ParseMountOptions(const std::string& options, CommandLine* cmd);

// `value` escaped for libfuse's option parser (fuse_opt), which splits "-o" strings at commas
// and takes a backslash as "the next character is literal": "s3://b/p,allow_other" ->
// "s3://b/p\,allow_other". Anything put into libfuse's option string from outside (SOURCE as
// fsname) goes through it, so it stays one option's value and never adds an option.
std::string EscapeFuseOptionValue(const std::string& value);

}  // namespace kvfs
