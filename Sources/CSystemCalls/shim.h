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
#include <pthread.h>
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


/// What a fatal signal (SIGABRT from the runtime when memory runs out or a check fails,
/// SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE) removes before the process ends: the files a
/// command is writing that are not yet anything to keep (a partial archive). Kept in fixed
/// storage, since a signal handler may not allocate or take a lock; each slot is free (0),
/// being filled or emptied (1), or names a path (2). The storage is the caller's, passed to
/// every call: a static variable here would be one per copy of these inline functions, and
/// the optimiser copies them into every module that inlines a caller.
#define PULSE_FATAL_SLOTS 64
#define PULSE_FATAL_PATH_MAX 4096
struct pulse_fatal_paths {
    int state[PULSE_FATAL_SLOTS];
    char path[PULSE_FATAL_SLOTS][PULSE_FATAL_PATH_MAX];
    int taken;
    /// Whether standard error was a terminal at installation: a progress line is then cleared.
    int terminal;
};

static inline size_t pulse_fatal_paths_size(void) { return sizeof(struct pulse_fatal_paths); }

/// Adds `path` to what a fatal signal removes: 0, or -1 when it is too long or every slot is
/// in use (the next run's sweep then removes it, as after SIGKILL).
static inline int pulse_fatal_track(void *storage, const char *path) {
    struct pulse_fatal_paths *s = (struct pulse_fatal_paths *)storage;
    size_t length = strlen(path);
    if (length >= PULSE_FATAL_PATH_MAX) return -1;
    for (int i = 0; i < PULSE_FATAL_SLOTS; i++) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&s->state[i], &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            memcpy(s->path[i], path, length + 1);
            __atomic_store_n(&s->state[i], 2, __ATOMIC_RELEASE);
            return 0;
        }
    }
    return -1;
}

/// Takes `path` out of what a fatal signal removes.
static inline void pulse_fatal_untrack(void *storage, const char *path) {
    struct pulse_fatal_paths *s = (struct pulse_fatal_paths *)storage;
    for (int i = 0; i < PULSE_FATAL_SLOTS; i++) {
        int expected = 2;
        if (__atomic_load_n(&s->state[i], __ATOMIC_ACQUIRE) == 2 && strcmp(s->path[i], path) == 0
            && __atomic_compare_exchange_n(&s->state[i], &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            s->path[i][0] = 0;
            __atomic_store_n(&s->state[i], 0, __ATOMIC_RELEASE);
        }
    }
}

/// The storage the handler reads: set once by `pulse_fatal_install`, which takes the
/// handler's address in the same copy of this code.
static inline struct pulse_fatal_paths **pulse_fatal_installed(void) {
    static struct pulse_fatal_paths *installed;
    return &installed;
}

static inline void pulse_fatal_write(const char *text) {
    size_t left = strlen(text);
    while (left > 0) {
        ssize_t n = write(2, text, left);
        if (n <= 0) { if (n < 0 && errno == EINTR) continue; return; }
        text += n;
        left -= (size_t)n;
    }
}

/// The handler: async-signal-safe calls only (unlink, rmdir, write, _exit). The first fatal
/// signal removes the tracked paths, says so in one line, and ends the process with exit 1 and
/// no core file (it would hold what the command had read). A second one, from another thread
/// meanwhile, waits for the first to end the process.
static inline void pulse_fatal_handler(int signal) {
    struct pulse_fatal_paths *s = *pulse_fatal_installed();
    if (__atomic_exchange_n(&s->taken, 1, __ATOMIC_ACQ_REL) != 0) {
        for (;;) pause();
    }
    for (int i = 0; i < PULSE_FATAL_SLOTS; i++) {
        if (__atomic_load_n(&s->state[i], __ATOMIC_ACQUIRE) == 2) {
            if (unlink(s->path[i]) != 0 && errno == EISDIR) (void)rmdir(s->path[i]);
        }
    }
    const char *name = signal == SIGABRT ? "SIGABRT" : signal == SIGSEGV ? "SIGSEGV" : signal == SIGBUS ? "SIGBUS"
        : signal == SIGILL ? "SIGILL" : signal == SIGTRAP ? "SIGTRAP" : signal == SIGFPE ? "SIGFPE" : "a fatal signal";
    pulse_fatal_write(s->terminal ? "\r\033[K" : "");
    pulse_fatal_write("Error: stopped by a fatal error (");
    pulse_fatal_write(name);
    pulse_fatal_write(signal == SIGABRT ? ", as when memory runs out" : ", an internal fault");
    pulse_fatal_write("); the partial files it was writing are removed, its temporary directories by its next run\n");
    _exit(1);
}

/// Installs `pulse_fatal_handler` for the fatal signals, reading `storage`, on an alternate
/// stack of the calling thread (so it runs after a stack overflow there too), and unblocks
/// them (a parent may have left them blocked; a blocked SIGSEGV from a fault kills without a
/// handler). 0, or -1 with errno.
static inline int pulse_fatal_install(void *storage) {
    static char alternate[1 << 16];
    struct pulse_fatal_paths *s = (struct pulse_fatal_paths *)storage;
    s->terminal = isatty(2);
    *pulse_fatal_installed() = s;
    stack_t stack;
    memset(&stack, 0, sizeof stack);
    stack.ss_sp = alternate;
    stack.ss_size = sizeof alternate;
    if (sigaltstack(&stack, NULL) != 0) return -1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = pulse_fatal_handler;
    action.sa_flags = SA_ONSTACK;
    sigfillset(&action.sa_mask);
    const int fatal[] = { SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE };
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        if (sigaction(fatal[i], &action, NULL) != 0) return -1;
    }
    sigset_t unblocked;
    sigemptyset(&unblocked);
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) sigaddset(&unblocked, fatal[i]);
    return pthread_sigmask(SIG_UNBLOCK, &unblocked, NULL) == 0 ? 0 : -1;
}

#endif
