#!/bin/sh
# Checks that the kvfs binary links no test-only code: neither the S3 bucket administration used by
# the tests (tests/support/s3_admin.h) nor the test fakes (tests/fakes). Reads the binary's symbol
# table with nm, so it fails (rather than passing vacuously) on a stripped binary.
# Usage: no_test_code.sh PATH/TO/kvfs
set -u
bin=${1:?usage: no_test_code.sh PATH/TO/kvfs}
syms=$(nm -C --defined-only "$bin") || { echo "FAIL: nm $bin failed"; exit 1; }
if ! printf '%s\n' "$syms" | grep -q 'kvfs::ParseCommandLine'; then
  echo "FAIL: $bin has no kvfs symbols (stripped?); cannot check it"
  exit 1
fi
bad=$(printf '%s\n' "$syms" |
  grep -E 'ForTest\b|ForTest\(|UniqueBucketName|S3TestOptionsFromEnv|kvfs::(MemoryStore|FaultStore)|kvfs::testing::')
if [ -n "$bad" ]; then
  echo "FAIL: test-only code linked into $bin:"
  printf '%s\n' "$bad" | head -20
  exit 1
fi
echo "OK: $bin holds no test-only symbols"
