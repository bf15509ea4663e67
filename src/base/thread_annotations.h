// Clang thread-safety annotations. They document which mutex guards which field; under GCC they
// compile to nothing, under clang with -Wthread-safety they are checked.
#pragma once

#if defined(__clang__)
#define KVFS_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define KVFS_THREAD_ANNOTATION_(x)
#endif

#define GUARDED_BY(x) KVFS_THREAD_ANNOTATION_(guarded_by(x))
#define PT_GUARDED_BY(x) KVFS_THREAD_ANNOTATION_(pt_guarded_by(x))
#define REQUIRES(...) KVFS_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) KVFS_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
