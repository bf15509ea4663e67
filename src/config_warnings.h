// Warnings about settings that put the store's secrets or the chunks at risk: a secret on the
// command line or in a config file other users can read, a plain-http endpoint, TLS verification
// turned off. They name the setting or file and the fix, never a value.
//
// Thread-safety: reentrant functions over their arguments.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "src/config.h"

namespace kvfs {

// For a secret key (secret_access_key, session_token) given with -o: every local user can read
// the command line.
std::string SecretOnCommandLineWarning(const std::string& key);

// For a config file of `mode` that sets the secret keys `keys` (as written in the file): empty
// when neither group nor others can read it.
std::string ReadableSecretFileWarning(const std::string& path, mode_t mode,
                                      const std::vector<std::string>& keys);

// For an S3 mount: a plain-http endpoint (requests carry the signed credentials, any session
// token and the data in clear text) and verify_tls=false. Empty for other sources.
std::vector<std::string> TransportWarnings(const KvfsConfig& config);

// config.warnings and TransportWarnings(config): everything the mount should warn about, once.
std::vector<std::string> SecurityWarnings(const KvfsConfig& config);

// Logs SecurityWarnings(config), one spdlog warning each. Called once, when the mount starts.
void LogSecurityWarnings(const KvfsConfig& config);

}  // namespace kvfs
