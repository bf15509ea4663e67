// Clang thread-safety annotations. They document which mutex guards which field; under GCC they
// compile to nothing, under clang with -Wthread-safety they are checked (the clang CI build uses
// -Wthread-safety -Werror over kvfs::Mutex, base/mutex.h).
#pragma once

#if defined(__clang__)
#define KVFS_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define KVFS_THREAD_ANNOTATION_(x)
#endif

#define CAPABILITY(x) KVFS_THREAD_ANNOTATION_(capability(x))
#define SCOPED_CAPABILITY KVFS_THREAD_ANNOTATION_(scoped_lockable)
#define GUARDED_BY(x) KVFS_THREAD_ANNOTATION_(guarded_by(x))
#define PT_GUARDED_BY(x) KVFS_THREAD_ANNOTATION_(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) KVFS_THREAD_ANNOTATION_(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) KVFS_THREAD_ANNOTATION_(acquired_after(__VA_ARGS__))
#define REQUIRES(...) KVFS_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) KVFS_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define RELEASE(...) KVFS_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) KVFS_THREAD_ANNOTATION_(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) KVFS_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) KVFS_THREAD_ANNOTATION_(assert_capability(x))
#define RETURN_CAPABILITY(x) KVFS_THREAD_ANNOTATION_(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS KVFS_THREAD_ANNOTATION_(no_thread_safety_analysis)
