// System calls the C library has no wrapper for (or Swift cannot call: `syscall` is variadic).
#pragma once
#include <errno.h>
#include <fcntl.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <linux/fs.h>
#include <linux/falloc.h>
#include <sys/ioctl.h>
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

/// ioctl(FICLONERANGE): the `length` bytes of `target` at `target_offset` become the blocks of
/// `source` at `source_offset`, shared (a reflink), not copied. Fails with EOPNOTSUPP where the
/// file system cannot share blocks (ext4, tmpfs), EXDEV across file systems, EINVAL for offsets
/// or a length off the file system's block boundaries, ENOSYS where the platform has no such call.
static inline int freshair_share_range(int source, long long source_offset, long long length,
                                       int target, long long target_offset) {
#if defined(__linux__) && defined(FICLONERANGE)
    struct file_clone_range range = {0};
    range.src_fd = source;
    range.src_offset = (unsigned long long)source_offset;
    range.src_length = (unsigned long long)length;
    range.dest_offset = (unsigned long long)target_offset;
    return ioctl(target, FICLONERANGE, &range);
#else
    (void)source; (void)source_offset; (void)length; (void)target; (void)target_offset;
    errno = ENOSYS;
    return -1;
#endif
}

/// fallocate(FALLOC_FL_KEEP_SIZE): blocks for the `length` bytes at `offset` are set aside
/// before they are written, the file's size unchanged. Fails with EOPNOTSUPP where the file
/// system cannot, ENOSYS where the platform has no such call.
static inline int freshair_reserve(int descriptor, long long offset, long long length) {
#if defined(__linux__)
    return (int)syscall(SYS_fallocate, descriptor, FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)length);
#else
    (void)descriptor; (void)offset; (void)length;
    errno = ENOSYS;
    return -1;
#endif
}

/// mallopt(M_ARENA_MAX, `arenas`): at most that many glibc malloc arenas (Swift cannot see
/// <malloc.h>). Does nothing where the C library is not glibc.
static inline void freshair_limit_malloc_arenas(int arenas) {
#if defined(__GLIBC__)
    mallopt(M_ARENA_MAX, arenas);
#else
    (void)arenas;
#endif
}

/// malloc_trim(0): hands back to the system the pages of every arena that hold nothing now,
/// wherever they are in the heap. Does nothing where the C library is not glibc.
static inline void freshair_return_freed_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

/// mallopt(M_TRIM_THRESHOLD, `bytes`): free memory at the top of a heap is given back to the
/// system only past `bytes`. Does nothing where the C library is not glibc.
static inline void freshair_set_trim_threshold(int bytes) {
#if defined(__GLIBC__)
    mallopt(M_TRIM_THRESHOLD, bytes);
#else
    (void)bytes;
#endif
}

/// mallopt(M_MMAP_THRESHOLD, `bytes`): every block of at least `bytes` gets pages of its own,
/// returned when freed. Setting it also stops glibc raising it to the largest block freed so
/// far, after which such blocks come from the heap, whose holes are kept; the trim threshold
/// then stays at its default, 128 KB. Does nothing where the C library is not glibc.
static inline void freshair_fix_mmap_threshold(int bytes) {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, bytes);
#else
    (void)bytes;
#endif
}
