// The S3 options a mount uses, resolved from its configuration: what AWS implies (virtual-hosted
// addressing, asking the bucket for its region) and what a directory bucket's name implies (its
// zonal endpoint and region). Shared by the store factory and --dump-config, and kept free of the
// stores themselves so the config fuzzer links it alone.
// Thread-safety: functions, reentrant.
#pragma once

#include "objstore/s3/s3_options.h"
#include "src/config.h"

namespace kvfs {

// config.s3 plus what can be inferred: the endpoint of the environment (AWS_ENDPOINT_URL_S3, else
// AWS_ENDPOINT_URL) when none is configured, which then decides the addressing as a configured
// one would (path style off AWS); the zonal endpoint of an S3 Express directory bucket
// ("name--use1-az4--x-s3" -> https://s3express-use1-az4.us-east-1.amazonaws.com, virtual-hosted,
// region us-east-1 unless one is given).
S3Options EffectiveS3Options(const KvfsConfig& config);

}  // namespace kvfs
