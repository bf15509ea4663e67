// Keeps kvfs_cache non-empty until the cache sources land.
