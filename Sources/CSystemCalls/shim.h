#ifndef PULSE_CSYSTEMCALLS_SHIM_H
#define PULSE_CSYSTEMCALLS_SHIM_H

// The system calls Swift's Glibc and Darwin modules do not declare (glibc hides them behind
// _GNU_SOURCE; prctl is variadic), each behind a plain C function. PulseSystem wraps them once.

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <signal.h>
#include <unistd.h>

#if defined(__linux__)
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
extern int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);
#endif

/// Renames `from` to `to` unless `to` exists, in one step: Linux renameat2(RENAME_NOREPLACE),
/// Apple renamex_np(RENAME_EXCL). -1 with errno EEXIST when `to` exists; EINVAL, ENOSYS or
/// ENOTSUP when the file system or system cannot do it.
static inline int pulse_rename_noreplace(const char *from, const char *to) {
#if defined(__linux__)
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, 1u /* RENAME_NOREPLACE */);
#elif defined(__APPLE__)
    return renamex_np(from, to, RENAME_EXCL);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/// Turns core dumps off for the rest of the process: no core file (RLIMIT_CORE 0) and, on
/// Linux, not dumpable (no core, no ptrace attach by the same user, /proc/PID/mem closed).
static inline int pulse_disable_core_dumps(void) {
    struct rlimit none = { 0, 0 };
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
#if defined(__linux__)
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return -1;
#endif
    return 0;
}

/// 1 when the process may dump core (Linux's dumpable flag), 0 when not, -1 where unknown.
static inline int pulse_is_dumpable(void) {
#if defined(__linux__)
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
#else
    return -1;
#endif
}

/// Opens an unnamed file in `directory` (Linux O_TMPFILE): it has no name from the start, so
/// no kill can leave it behind. -1 with errno EOPNOTSUPP, EISDIR or EINVAL where the file
/// system or system cannot; the caller then creates a named file and unlinks it at once.
// glibc defines O_TMPFILE only under _GNU_SOURCE, which the module does not set: without this
// the call below was compiled out and every "unnamed" file was a named one unlinked after.
// The value is the kernel's generic one (x86-64, arm64 and most others).
#if defined(__linux__) && !defined(O_TMPFILE)
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

static inline int pulse_open_unnamed(const char *directory) {
#if defined(__linux__)
    return open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#else
    (void)directory;
    errno = EOPNOTSUPP;
    return -1;
#endif
}

/// A descriptor that is readable while one of `mask`'s signals (blocked in every thread) is
/// pending (Linux signalfd), so a thread can wait for a signal without taking it; -1 with
/// errno ENOSYS where there is none.
static inline int pulse_signal_descriptor(const sigset_t *mask) {
#if defined(__linux__)
    return signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
#else
    (void)mask;
    errno = ENOSYS;
    return -1;
#endif
}

/// Waits until `fd` is readable; 1 then, -1 on an error.
static inline int pulse_wait_readable(int fd) {
#if defined(__linux__)
    struct pollfd wanted = { fd, POLLIN, 0 };
    int ready;
    do { ready = poll(&wanted, 1, -1); } while (ready < 0 && errno == EINTR);
    return ready > 0 ? 1 : -1;
#else
    (void)fd;
    errno = ENOSYS;
    return -1;
#endif
}

/// Takes one pending signal from a signal descriptor: its number, or -1 when none is pending.
static inline int pulse_take_signal(int fd) {
#if defined(__linux__)
    struct signalfd_siginfo info;
    ssize_t n = read(fd, &info, sizeof info);
    return n == (ssize_t)sizeof info ? (int)info.ssi_signo : -1;
#else
    (void)fd;
    return -1;
#endif
}

/// Overwrites `count` bytes at `bytes` with zeros in a way the compiler may not remove.
static inline void pulse_wipe(void *bytes, size_t count) {
    volatile unsigned char *p = (volatile unsigned char *)bytes;
    while (count--) *p++ = 0;
}

#endif
