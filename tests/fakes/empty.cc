// Keeps kvfs_test_fakes non-empty before any fake exists.
