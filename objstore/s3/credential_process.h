// credential_process (a profile's setting, credential_sources.h): a command that prints
// credentials as JSON, run through /bin/sh as the AWS CLI runs it.
//
// Thread-safety: the fetch is stateless apart from what it captures; safe to call from any thread.
#pragma once

#include <string>

#include "objstore/s3/credential_provider.h"

namespace kvfs::s3 {

// `command` through /bin/sh in a process group of its own; killed with its group past
// `timeout_ms`. Messages name `what` ("credential_process of profile NAME"), never the command.
CredentialFetch ProcessFetch(const std::string& command, const std::string& what, int timeout_ms);

}  // namespace kvfs::s3
