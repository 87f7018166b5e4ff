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
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#if defined(__linux__)
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/vfs.h>
extern int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);
#endif

/// Renames `from` to `to` unless `to` exists, in one step: Linux renameat2(RENAME_NOREPLACE),
/// Apple renameatx_np(RENAME_EXCL). -1 with errno EEXIST when `to` exists; EINVAL, ENOSYS or
/// ENOTSUP when the file system or system cannot do it.
/// Both names are taken relative to `directory` (a descriptor of a folder, or AT_FDCWD).
static inline int pulse_rename_noreplace(int directory, const char *from, const char *to) {
#if defined(__linux__)
    return renameat2(directory, from, directory, to, 1u /* RENAME_NOREPLACE */);
#elif defined(__APPLE__)
    return renameatx_np(directory, from, directory, to, RENAME_EXCL);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/// The largest file the process may write (RLIMIT_FSIZE, `ulimit -f`) in bytes, or -1 when
/// there is no limit (or it cannot be read).
static inline long long pulse_file_size_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return -1;
    return (long long)limit.rlim_cur;
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

/// 1 when `path` is on a FUSE file system (Linux), 0 when not or where unknown. The kernel's
/// FUSE client does not remove a file that is unlinked while open: it renames it to a hidden
/// name, removed when it closes, if the file system manages to (fusefat does not).
static inline int pulse_is_fuse(const char *path) {
#if defined(__linux__)
    struct statfs info;
    if (statfs(path, &info) != 0) return 0;
    return info.f_type == 0x65735546 /* FUSE_SUPER_MAGIC */ ? 1 : 0;
#else
    (void)path;
    return 0;
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
/// SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE) needs to end the process as cleanly as an
/// interruption: the files and folders a command is writing that are not yet anything to keep
/// (a partial archive, a staging folder), whether a commit is under way or done, and a
/// terminal whose echo a prompt turned off. Kept in fixed storage, since a signal handler may
/// not allocate or take a lock; each path slot is free (0), being filled or emptied (1), names
/// a path (2), or is being removed by the handler (3). The storage is the caller's, passed to
/// every call: a static variable here would be one per copy of these inline functions, and
/// the optimiser copies them into every module that inlines a caller.
#define PULSE_FATAL_SLOTS 64
#define PULSE_FATAL_PATH_MAX 4096
#define PULSE_FATAL_DEPTH 128
#define PULSE_FATAL_LISTING 4096
#define PULSE_FATAL_NAME 256
#define PULSE_FATAL_OUTCOME 1024
#define PULSE_FATAL_REPORT 8192
/// Where the message goes in `pulse_fatal_state.report` (a control byte: none is raw in JSON).
#define PULSE_FATAL_REPORT_MESSAGE '\x01'
#include <termios.h>
#include <time.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif
struct pulse_fatal_state {
    int state[PULSE_FATAL_SLOTS];
    char path[PULSE_FATAL_SLOTS][PULSE_FATAL_PATH_MAX];
    /// 1 for a folder made on the way to a temporary path: removed only if it is empty once the
    /// rest is gone (another command may have put its own folder in it).
    char ifEmpty[PULSE_FATAL_SLOTS];
    /// The thread that began to end the process on a signal (0 until one has): the first fatal
    /// signal's, or, negated, the interruption watcher's (`pulse_fatal_take_for_interrupt`).
    /// Whoever comes second leaves the removal to the first.
    long takenBy;
    /// Whether standard error was a terminal at installation: a progress line is then cleared.
    int terminal;
    /// Threads inside a commit or the process's normal end (at most one at a time: both run
    /// under the interruption's lock, which nests), and the last one to enter.
    int committing;
    long committer;
    /// What a commit made permanent (set: 1), said instead of "removed".
    int committedSet;
    char committed[PULSE_FATAL_OUTCOME];
    /// A terminal whose echo is off (set: 1), and its settings from before.
    int echoHidden;
    int echoDescriptor;
    struct termios echoSaved;
    /// A directory listing while a folder is emptied, and the folder entered at each level.
    _Alignas(8) char listing[PULSE_FATAL_LISTING];
    char names[PULSE_FATAL_DEPTH][PULSE_FATAL_NAME];
    /// A tracked path's name while it is renamed aside.
    char aside[PULSE_FATAL_PATH_MAX];
    /// For a test only (`pulse_fatal_test_hold`): the handler waits, once it has set a tracked
    /// path aside and before it removes it, until another thread waits for the end (`awaiting`,
    /// counted by `pulse_fatal_awaiting`), so that what the other threads do meanwhile comes first.
    int testHold;
    int awaiting;
    /// Who writes standard output's one report (`pulse_report_claim`): 0 no one yet, 1 the
    /// command, 2 an interruption or a fatal signal that ends it first.
    int reportClaim;
    /// The failure object `--json` prints when a fatal signal ends the command (set: 1), the
    /// message's places marked with `PULSE_FATAL_REPORT_MESSAGE`.
    int reportSet;
    char report[PULSE_FATAL_REPORT];
};

static inline size_t pulse_fatal_state_size(void) { return sizeof(struct pulse_fatal_state); }

/// Claims standard output's one report for `claimant` (1 the command, 2 what ends it): 1 when
/// it is the claimant's (taken now, or before by the same), 0 when the other has it.
static inline int pulse_report_claim(void *storage, int claimant) {
    struct pulse_fatal_state *s = (struct pulse_fatal_state *)storage;
    int expected = 0;
    if (__atomic_compare_exchange_n(&s->reportClaim, &expected, claimant, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) return 1;
    return expected == claimant;
}

/// Whether anyone has claimed standard output's report.
static inline int pulse_report_claimed(void *storage) {
    return __atomic_load_n(&((struct pulse_fatal_state *)storage)->reportClaim, __ATOMIC_SEQ_CST) != 0;
}

/// Sets the failure object a fatal signal prints on standard output (`--json`); 0, or -1 when
/// it does not fit.
static inline int pulse_fatal_set_report(void *storage, const char *report) {
    struct pulse_fatal_state *s = (struct pulse_fatal_state *)storage;
    size_t length = strlen(report);
    if (length >= PULSE_FATAL_REPORT) return -1;
    __atomic_store_n(&s->reportSet, 0, __ATOMIC_SEQ_CST);
    memcpy(s->report, report, length + 1);
    __atomic_store_n(&s->reportSet, 1, __ATOMIC_RELEASE);
    return 0;
}

/// Adds `path` to what a fatal signal removes (with `ifEmpty`, only if it is an empty folder
/// then): 0, or -1 when it is too long or every slot is in use (the next run's sweep then
/// removes it, as after SIGKILL).
static inline int pulse_fatal_track(void *storage, const char *path, int ifEmpty) {
    struct pulse_fatal_state *s = (struct pulse_fatal_state *)storage;
    size_t length = strlen(path);
    if (length >= PULSE_FATAL_PATH_MAX) return -1;
    for (int i = 0; i < PULSE_FATAL_SLOTS; i++) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&s->state[i], &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            memcpy(s->path[i], path, length + 1);
            s->ifEmpty[i] = ifEmpty != 0;
            __atomic_store_n(&s->state[i], 2, __ATOMIC_RELEASE);
            return 0;
        }
    }
    return -1;
}

/// Takes `path` out of what a fatal signal removes.
static inline void pulse_fatal_untrack(void *storage, const char *path) {
    struct pulse_fatal_state *s = (struct pulse_fatal_state *)storage;
    for (int i = 0; i < PULSE_FATAL_SLOTS; i++) {
        int expected = 2;
        if (__atomic_load_n(&s->state[i], __ATOMIC_ACQUIRE) == 2 && strcmp(s->path[i], path) == 0
            && __atomic_compare_exchange_n(&s->state[i], &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            s->path[i][0] = 0;
            __atomic_store_n(&s->state[i], 0, __ATOMIC_RELEASE);
        }
    }
}

/// The calling thread, as the kernel knows it (async-signal-safe).
static inline long pulse_fatal_thread(void) {
#if defined(__linux__)
    return syscall(SYS_gettid);
#else
    return (long)pthread_self();
#endif
}

/// Enters a commit (or the process's normal end, or a step that must run wholly before a
/// removal or not at all: `InterruptCleanup.uninterrupted`): 0, or -1 when a fatal signal has
/// come, and then the caller must not commit but wait for the handler to end the process.
/// Either the handler sees the commit and lets it finish before it removes anything, or the
/// commit sees the handler and does not start (both sides store, then load, sequentially
/// consistent).
static inline int pulse_fatal_enter_commit(void *storage) {
    struct pulse_fatal_state *s = (struct pulse_fatal_state *)storage;
    // Already inside (a step within a commit: the interruption's lock, held by the caller,
    // lets one thread at a time in): it goes on, or the handler would wait for a commit that
    // waits for the handler.
    if (__atomic_load_n(&s->committing, __ATOMIC_SEQ_CST) > 0) {
        __atomic_add_fetch(&s->committing, 1, __ATOMIC_SEQ_CST);
        return 0;
    }
    __atomic_store_n(&s->committer, pulse_fatal_thread(), __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&s->committing, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&s->takenBy, __ATOMIC_SEQ_CST) != 0) {
        __atomic_sub_fetch(&s->committing, 1, __ATOMIC_SEQ_CST);
        return -1;
    }
    return 0;
}

/// The interruption's watcher, about to remove what is registered and end the process: 0 when
/// it goes ahead (a fatal signal from now on leaves the removal to it), -1 when a fatal signal
/// came first (the watcher then waits for its handler to end the process). Two removals at
/// once left what each had renamed aside from the other, said to be removed.
static inline int pulse_fatal_take_for_interrupt(void *storage) {
    struct pulse_fatal_state *s = (struct pulse_fatal_state *)storage;
    long none = 0;
    return __atomic_compare_exchange_n(&s->takenBy, &none, -pulse_fatal_thread(), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) ? 0 : -1;
}

/// Makes the handler hold in its removal until another thread waits for the end
/// (tests only: `PULSE_ARCHIVE_TEST_FATAL_HOLD`).
static inline void pulse_fatal_test_hold(void *storage) {
    struct pulse_fatal_state *s = (struct pulse_fatal_state *)storage;
    __atomic_store_n(&s->testHold, 1, __ATOMIC_SEQ_CST);
}

/// Counts a thread that waits for a signal's handler or watcher to end the process.
static inline void pulse_fatal_awaiting(void *storage) {
    struct pulse_fatal_state *s = (struct pulse_fatal_state *)storage;
    __atomic_add_fetch(&s->awaiting, 1, __ATOMIC_SEQ_CST);
}

static inline void pulse_fatal_leave_commit(void *storage) {
    struct pulse_fatal_state *s = (struct pulse_fatal_state *)storage;
    __atomic_sub_fetch(&s->committing, 1, __ATOMIC_SEQ_CST);
}

/// Records what a commit made permanent, for the handler's message (called inside the commit).
static inline void pulse_fatal_committed(void *storage, const char *outcome) {
    struct pulse_fatal_state *s = (struct pulse_fatal_state *)storage;
    __atomic_store_n(&s->committedSet, 0, __ATOMIC_RELEASE);
    size_t length = strlen(outcome);
    if (length >= PULSE_FATAL_OUTCOME) length = PULSE_FATAL_OUTCOME - 1;
    memcpy(s->committed, outcome, length);
    s->committed[length] = 0;
    __atomic_store_n(&s->committedSet, 1, __ATOMIC_RELEASE);
}

/// Records the settings of a terminal whose echo goes off (`descriptor` >= 0), or that it is
/// back on (-1).
static inline void pulse_fatal_hidden_echo(void *storage, int descriptor, const struct termios *saved) {
    struct pulse_fatal_state *s = (struct pulse_fatal_state *)storage;
    __atomic_store_n(&s->echoHidden, 0, __ATOMIC_RELEASE);
    if (descriptor < 0) return;
    s->echoDescriptor = descriptor;
    s->echoSaved = *saved;
    __atomic_store_n(&s->echoHidden, 1, __ATOMIC_RELEASE);
}

/// The storage the handler reads: set once by `pulse_fatal_install`, which takes the
/// handler's address in the same copy of this code.
static inline struct pulse_fatal_state **pulse_fatal_installed(void) {
    static struct pulse_fatal_state *installed;
    return &installed;
}

static inline void pulse_fatal_write_to(int descriptor, const char *text, size_t left) {
    while (left > 0) {
        ssize_t n = write(descriptor, text, left);
        if (n <= 0) { if (n < 0 && errno == EINTR) continue; return; }
        text += n;
        left -= (size_t)n;
    }
}

static inline void pulse_fatal_write(const char *text) {
    pulse_fatal_write_to(2, text, strlen(text));
}

/// Writes `text` to `descriptor` as the inside of a JSON string: `"` and `\` escaped,
/// control bytes as `\u00XX`.
static inline void pulse_fatal_write_json_to(int descriptor, const char *text) {
    static const char hex[] = "0123456789abcdef";
    for (const char *run = text;; text++) {
        unsigned char c = (unsigned char)*text;
        if (c != 0 && c >= 0x20 && c != '"' && c != '\\') continue;
        pulse_fatal_write_to(descriptor, run, (size_t)(text - run));
        if (c == 0) return;
        char escaped[6] = { '\\', (char)c, 0, 0, 0, 0 };
        size_t length = 2;
        if (c < 0x20) {
            escaped[1] = 'u'; escaped[2] = '0'; escaped[3] = '0'; escaped[4] = hex[c >> 4]; escaped[5] = hex[c & 15];
            length = 6;
        }
        pulse_fatal_write_to(descriptor, escaped, length);
        run = text + 1;
    }
}

static inline void pulse_fatal_write_json(const char *text) {
    pulse_fatal_write_json_to(1, text);
}

#if defined(__linux__)
/// One entry of getdents64's listing (the kernel's layout; glibc declares it only under
/// _GNU_SOURCE, and readdir may allocate).
struct pulse_fatal_entry {
    unsigned long long inode;
    long long offset;
    unsigned short length;
    unsigned char type;
    char name[];
};
#endif

/// Empties the directory open at `directory`, never following a link (a link is removed as an
/// entry), down to `PULSE_FATAL_DEPTH` levels, with async-signal-safe calls only. One listing
/// buffer serves every level, so after a descent the listing starts again; a listing also
/// starts again after any pass that removed something (entries removed during a listing may
/// hide others from it), until a pass removes nothing. Best effort: what stays (a read-only
/// folder, a deeper tree) is found by the caller. Linux only (getdents64); elsewhere the
/// folder is left, and said to be.
static inline void pulse_fatal_empty(struct pulse_fatal_state *s, int directory, int depth) {
#if defined(__linux__)
    if (depth >= PULSE_FATAL_DEPTH) return;
    for (;;) {
        if (lseek(directory, 0, SEEK_SET) != 0) return;
        int progressed = 0, descended = 0;
        long count;
        while (!descended && (count = syscall(SYS_getdents64, directory, s->listing, PULSE_FATAL_LISTING)) > 0) {
            for (long at = 0; at < count && !descended;) {
                struct pulse_fatal_entry *entry = (struct pulse_fatal_entry *)(s->listing + at);
                at += entry->length;
                const char *name = entry->name;
                if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
                if (unlinkat(directory, name, 0) == 0) { progressed = 1; continue; }
                if (errno != EISDIR && errno != EPERM) continue;
                size_t length = strlen(name);
                if (length >= PULSE_FATAL_NAME) continue;
                memcpy(s->names[depth], name, length + 1);
                int child = openat(directory, s->names[depth], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (child < 0) continue;
                descended = 1;
                pulse_fatal_empty(s, child, depth + 1);
                close(child);
                if (unlinkat(directory, s->names[depth], AT_REMOVEDIR) == 0) progressed = 1;
            }
        }
        if (!progressed) return;
    }
#else
    (void)s; (void)directory; (void)depth;
#endif
}

/// Renames the path in slot `slot` aside, to `<path>.removing-<pid>`, and keeps the new name in
/// the slot: the other threads run on while the handler removes, and what they create later
/// under the old name then fails instead of landing in a folder being emptied (the interruption's
/// removal does the same). Left where it is when the new name does not fit or rename fails.
static inline void pulse_fatal_set_aside(struct pulse_fatal_state *s, int slot) {
    char digits[24];
    int count = 0;
    for (long pid = (long)getpid(); pid > 0 && count < (int)sizeof digits; pid /= 10) digits[count++] = (char)('0' + pid % 10);
    static const char suffix[] = ".removing-";
    size_t length = strlen(s->path[slot]);
    if (length + sizeof suffix - 1 + (size_t)count >= PULSE_FATAL_PATH_MAX) return;
    memcpy(s->aside, s->path[slot], length);
    memcpy(s->aside + length, suffix, sizeof suffix - 1);
    length += sizeof suffix - 1;
    while (count > 0) s->aside[length++] = digits[--count];
    s->aside[length] = 0;
    if (rename(s->path[slot], s->aside) == 0) memcpy(s->path[slot], s->aside, length + 1);
}

/// Removes a tracked path: a file, or a folder and what it holds. 0 when it is gone, -1 when
/// something stayed.
static inline int pulse_fatal_remove(struct pulse_fatal_state *s, const char *path) {
    if (unlink(path) == 0 || errno == ENOENT) return 0;
    if (errno != EISDIR && errno != EPERM) return -1;
    int directory = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (directory < 0) return errno == ENOENT ? 0 : -1;
    pulse_fatal_empty(s, directory, 0);
    close(directory);
    return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
}

/// The handler: async-signal-safe calls only. The first fatal signal waits for a commit under
/// way on another thread to finish (at most about ten seconds), so the work is either whole
/// and said to be, or removed; puts a hidden echo back; removes the tracked paths unless a
/// commit made them permanent; says so in one line; and ends the process with exit 1 and no
/// core file (it would hold what the command had read). A second one, from another thread
/// meanwhile, waits for the first to end the process. One after the interruption's watcher has
/// begun waits for the watcher to end it, but for about ten seconds only: the signal may have
/// stopped a thread inside a lock the watcher needs (malloc's), and then it is the handler
/// that removes what is left and ends the process (an import hung for good on SIGINT, then
/// SIGSEGV). The watcher's own thread takes no fatal signal sent from outside (it blocks
/// them); one it raises itself (an abort in its removal) goes straight on.
/// The fatal error's message (what the `Error:` line says after its prefix), on standard
/// error, or with `json` on standard output as a JSON string's inside.
static inline void pulse_fatal_message(struct pulse_fatal_state *s, int signal, const int *left, int leftCount, int json) {
    void (*put)(const char *) = json ? pulse_fatal_write_json : pulse_fatal_write;
    const char *name = signal == SIGABRT ? "SIGABRT" : signal == SIGSEGV ? "SIGSEGV" : signal == SIGBUS ? "SIGBUS"
        : signal == SIGILL ? "SIGILL" : signal == SIGTRAP ? "SIGTRAP" : signal == SIGFPE ? "SIGFPE" : "a fatal signal";
    put("stopped by a fatal error (");
    put(name);
    put(": memory ran out, or an internal fault)");
    int committed = __atomic_load_n(&s->committedSet, __ATOMIC_ACQUIRE);
    if (committed) {
        put(" after its commit: ");
        put(s->committed);
    } else {
        put("; the partial files and folders it was writing are removed");
    }
    // What could not be removed is named, never said to be gone.
    for (int i = 0; i < leftCount; i++) {
        put(i > 0 ? ", " : committed ? "; could not remove " : ", except ");
        put(s->path[left[i]]);
    }
    if (leftCount > 0) put(committed ? ": remove it by hand" : ", which could not be: remove it by hand");
}

static inline void pulse_fatal_handler(int signal) {
    struct pulse_fatal_state *s = *pulse_fatal_installed();
    long self = pulse_fatal_thread(), none = 0;
    struct timespec millisecond = { 0, 1000000 };
    if (!__atomic_compare_exchange_n(&s->takenBy, &none, self, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        if (none > 0) for (;;) pause();
        for (int i = 0; i < 10000 && none != -self; i++) nanosleep(&millisecond, 0);
    }
    for (int i = 0; i < 10000 && __atomic_load_n(&s->committing, __ATOMIC_SEQ_CST) > 0
                             && __atomic_load_n(&s->committer, __ATOMIC_SEQ_CST) != self; i++) {
        nanosleep(&millisecond, 0);
    }
    if (__atomic_load_n(&s->echoHidden, __ATOMIC_ACQUIRE)) (void)tcsetattr(s->echoDescriptor, TCSANOW, &s->echoSaved);
    int left[PULSE_FATAL_SLOTS], leftCount = 0;
    for (int i = 0; i < PULSE_FATAL_SLOTS; i++) {
        // Claimed (3), so that no other thread's untrack empties the slot while it is read.
        int expected = 2;
        if (!__atomic_compare_exchange_n(&s->state[i], &expected, 3, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) continue;
        if (s->ifEmpty[i]) {
            __atomic_store_n(&s->state[i], 2, __ATOMIC_RELEASE);
            continue;
        }
        pulse_fatal_set_aside(s, i);
        for (int held = 0; held < 60000 && __atomic_load_n(&s->testHold, __ATOMIC_SEQ_CST)
                                 && __atomic_load_n(&s->awaiting, __ATOMIC_SEQ_CST) == 0; held++) {
            nanosleep(&millisecond, 0);
        }
        if (pulse_fatal_remove(s, s->path[i]) != 0) left[leftCount++] = i;
    }
    // Then the folders made on the way, each once the one inside it is gone: passes until one
    // removes nothing. One that is not empty holds something else, and is not ours to name.
    for (int removed = 1; removed;) {
        removed = 0;
        for (int i = 0; i < PULSE_FATAL_SLOTS; i++) {
            int expected = 2;
            if (!__atomic_compare_exchange_n(&s->state[i], &expected, 3, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) continue;
            if (s->ifEmpty[i] && rmdir(s->path[i]) == 0) {
                removed = 1;
            } else {
                __atomic_store_n(&s->state[i], 2, __ATOMIC_RELEASE);
            }
        }
    }
    // `--json`'s one object first, unless the command's report has begun; a reader that
    // takes nothing for a second does not keep the process from ending.
    if (__atomic_load_n(&s->reportSet, __ATOMIC_ACQUIRE) && pulse_report_claim(s, 2)) {
        struct pollfd ready = { .fd = 1, .events = POLLOUT, .revents = 0 };
        if (poll(&ready, 1, 1000) == 1 && (ready.revents & POLLOUT)) {
            const char *run = s->report;
            for (const char *at = s->report;; at++) {
                if (*at != 0 && *at != PULSE_FATAL_REPORT_MESSAGE) continue;
                pulse_fatal_write_to(1, run, (size_t)(at - run));
                if (*at == 0) break;
                pulse_fatal_message(s, signal, left, leftCount, 1);
                run = at + 1;
            }
            pulse_fatal_write_to(1, "\n", 1);
        }
    }
    pulse_fatal_write(s->terminal ? "\r\033[K" : "");
    pulse_fatal_write("Error: ");
    pulse_fatal_message(s, signal, left, leftCount, 0);
    pulse_fatal_write("\n");
    _exit(1);
}

/// The signals the handler takes: SIGABRT (the runtime when memory runs out, a failed check),
/// SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE.
static inline sigset_t pulse_fatal_signals(void) {
    sigset_t set;
    sigemptyset(&set);
    const int fatal[] = { SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE };
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) sigaddset(&set, fatal[i]);
    return set;
}

/// Installs `pulse_fatal_handler` for the fatal signals, reading `storage`, on an alternate
/// stack of the calling thread (so it runs after a stack overflow there too), and unblocks
/// them (a parent may have left them blocked; a blocked SIGSEGV from a fault kills without a
/// handler). 0, or -1 with errno.
static inline int pulse_fatal_install(void *storage) {
    static char alternate[1 << 16];
    struct pulse_fatal_state *s = (struct pulse_fatal_state *)storage;
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
    sigset_t fatal = pulse_fatal_signals();
    for (int number = 1; number < NSIG; number++) {
        if (sigismember(&fatal, number) == 1 && sigaction(number, &action, NULL) != 0) return -1;
    }
    return pthread_sigmask(SIG_UNBLOCK, &fatal, NULL) == 0 ? 0 : -1;
}

/// Blocks the fatal signals in the calling thread (the interruption's watcher), so that one
/// sent from outside lands on another. 0, or -1.
static inline int pulse_fatal_block_in_this_thread(void) {
    sigset_t fatal = pulse_fatal_signals();
    return pthread_sigmask(SIG_BLOCK, &fatal, NULL) == 0 ? 0 : -1;
}

/// Sends `signal` to one thread of a process (tests: a fatal signal that lands on a thread
/// other than the one committing). 0, or -1 with errno.
static inline int pulse_signal_thread(int process, int thread, int signal) {
#if defined(__linux__)
    return (int)syscall(SYS_tgkill, process, thread, signal);
#else
    (void)process; (void)thread; (void)signal;
    errno = ENOSYS;
    return -1;
#endif
}

#endif
