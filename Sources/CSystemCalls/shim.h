// System calls the C library has no wrapper for (or Swift cannot call: `syscall` is variadic).
#pragma once
#include <errno.h>
#include <fcntl.h>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#endif

/// openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS: `path` is
/// resolved below `directory` only, through no link and no `..` that leaves it. Fails with
/// ENOSYS where the kernel (before Linux 5.6) or the platform has no openat2.
static inline int freshair_open_beneath(int directory, const char *path, int flags, unsigned int mode) {
#if defined(__linux__) && defined(SYS_openat2)
    struct open_how how = {0};
    how.flags = (unsigned long long)(unsigned int)flags;
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    return (int)syscall(SYS_openat2, directory, path, &how, sizeof how);
#else
    (void)directory; (void)path; (void)flags; (void)mode;
    errno = ENOSYS;
    return -1;
#endif
}
