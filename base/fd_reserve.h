// The descriptors kvfs keeps free when it runs short. A reader holds a cache entry's descriptor
// for as long as it keeps the file open, so the processes on the mount decide how many the
// daemon holds; without a reserve they could take the last one, and then what must not fail
// would: libfuse's own descriptors, the store's sockets, the /proc reads behind the write path's
// writer checks, and the sanitizers' pipe() probes (UBSan reports a valid object as having an
// invalid vptr when pipe() fails, and aborts the daemon: ENOTCONN on the mount).
//
// So the opens that requests cause (cache entries, spool files) go through KeepFdReserve: a
// descriptor that lies within the reserve below RLIMIT_NOFILE is closed again and the open fails
// with EMFILE, which the request's caller gets. The kernel hands out the lowest free number, so a
// descriptor numbered n means the n below it are all in use.
//
// Thread-safety: stateless; safe from any thread.
#pragma once

namespace kvfs {

// Descriptors kept free: 32, or a quarter of a smaller limit.
int FdReserve();

// `fd` as returned by an open(2) a request caused: returned as is, or, when it lies within the
// reserve, closed and -1 with errno EMFILE. A negative fd passes through (errno unchanged).
int KeepFdReserve(int fd);

}  // namespace kvfs
