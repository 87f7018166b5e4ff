#ifndef PULSE_CSQLITE_SHIM_H
#define PULSE_CSQLITE_SHIM_H
#include <sqlite3.h>

/// sqlite3_config is variadic, which Swift cannot call: this is the one call we need. Memory
/// statistics take a global mutex on every allocation; nothing here reads them. Must run
/// before the first connection opens.
static inline int pulse_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/// Double-quoted text is an identifier only: SQLite's legacy reading of `"name"` as the
/// string 'name' when no column is so named would make a column a hand edit dropped read back
/// as its own name, in every row, without an error.
static inline int pulse_sqlite3_disable_double_quoted_strings(sqlite3 *db) {
    int status = sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, (int *)0);
    return status == SQLITE_OK ? sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DDL, 0, (int *)0) : status;
}

#include <string.h>

/// `double_bits(x)`: the 64 bits of a double as an integer (NULL for NULL). SQL compares
/// doubles by value, so `-0.0 IS 0.0`; `verify --store` compares these bits as well, so a
/// store that lost a negative zero's sign is told apart.
static void pulse_sqlite3_double_bits(sqlite3_context *context, int count, sqlite3_value **values) {
    (void)count;
    if (sqlite3_value_type(values[0]) == SQLITE_NULL) { sqlite3_result_null(context); return; }
    double value = sqlite3_value_double(values[0]);
    sqlite3_int64 bits;
    memcpy(&bits, &value, sizeof bits);
    sqlite3_result_int64(context, bits);
}

static inline int pulse_sqlite3_define_double_bits(sqlite3 *db) {
    return sqlite3_create_function_v2(db, "double_bits", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                      0, pulse_sqlite3_double_bits, 0, 0, 0);
}
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/// SQLite's default VFS with one change: the files it deletes on close (the spill of an unnamed
/// database, a sort's run, a statement journal). Its unix VFS names such a file in the
/// temporary directory and unlinks it right after creating it, so a process killed in between
/// (SIGKILL, which nothing can hold off) leaves it there, where nothing ever removes it. Here,
/// on Linux, the file is created without a name (`openUnnamed`: O_TMPFILE) in the directory SQLite would have
/// used, and read and written through the few methods below (no locks: nothing else can reach
/// it). Where that cannot be (a file system without O_TMPFILE, another system), the unix VFS
/// creates it as before, between `hold` and `release`: the caller's hold is the lock an
/// interruption takes before it ends the process, so at least no Ctrl-C leaves it; and on a
/// file system that would keep it under another name (`keepsRemovedFiles`) it is refused
/// (SQLITE_CANTOPEN). The storage
/// is the caller's (see `pulse_sqlite3_vfs_size`): a static here would be one per module that
/// inlines the registration.
struct pulse_sqlite3_vfs {
    /// First, so SQLite's `sqlite3_vfs *` is this structure's address.
    sqlite3_vfs vfs;
    sqlite3_vfs *underlying;
    void (*hold)(void);
    void (*release)(void);
    /// Nonzero for a directory whose file system keeps a file removed while open (FUSE): the
    /// unix VFS's way would leave its files there, and fail to read them back.
    int (*keepsRemovedFiles)(const char *directory);
    /// A new file without a name in `directory` (the caller's `O_TMPFILE`), or -1.
    int (*openUnnamed)(const char *directory);
};

/// A temporary file without a name: its descriptor.
struct pulse_sqlite3_unnamed_file {
    /// First, so SQLite's `sqlite3_file *` is this structure's address.
    sqlite3_file base;
    int descriptor;
};

static inline size_t pulse_sqlite3_vfs_size(void) { return sizeof(struct pulse_sqlite3_vfs); }

/// The directory the unix VFS creates its temporary files in, chosen as it chooses it
/// (`sqlite3_temp_directory`, `$SQLITE_TMPDIR`, `$TMPDIR`, /var/tmp, /usr/tmp, /tmp, the
/// current directory: the first that is a directory this process may write), or null.
static inline const char *pulse_sqlite3_temporary_directory(void) {
    const char *candidates[] = { sqlite3_temp_directory, getenv("SQLITE_TMPDIR"), getenv("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp", "." };
    for (size_t index = 0; index < sizeof candidates / sizeof candidates[0]; index++) {
        struct stat info;
        const char *directory = candidates[index];
        if (directory == 0 || stat(directory, &info) != 0 || !S_ISDIR(info.st_mode) || access(directory, W_OK | X_OK) != 0) continue;
        return directory;
    }
    return 0;
}

static int pulse_sqlite3_unnamed_close(sqlite3_file *file) {
    struct pulse_sqlite3_unnamed_file *self = (struct pulse_sqlite3_unnamed_file *)file;
    // Linux releases the descriptor even when close reports EINTR: never retried.
    if (self->descriptor >= 0) close(self->descriptor);
    self->descriptor = -1;
    return SQLITE_OK;
}

/// Reads `amount` bytes at `offset`; past the end, the rest is zeros and SQLite is told the
/// read was short, as its VFS contract asks.
static int pulse_sqlite3_unnamed_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    struct pulse_sqlite3_unnamed_file *self = (struct pulse_sqlite3_unnamed_file *)file;
    char *bytes = (char *)buffer;
    int done = 0;
    while (done < amount) {
        ssize_t count = pread(self->descriptor, bytes + done, (size_t)(amount - done), (off_t)(offset + done));
        if (count < 0 && errno == EINTR) continue;
        if (count < 0) return SQLITE_IOERR_READ;
        if (count == 0) break;
        done += (int)count;
    }
    if (done == amount) return SQLITE_OK;
    memset(bytes + done, 0, (size_t)(amount - done));
    return SQLITE_IOERR_SHORT_READ;
}

static int pulse_sqlite3_unnamed_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    struct pulse_sqlite3_unnamed_file *self = (struct pulse_sqlite3_unnamed_file *)file;
    const char *bytes = (const char *)buffer;
    int done = 0;
    while (done < amount) {
        ssize_t count = pwrite(self->descriptor, bytes + done, (size_t)(amount - done), (off_t)(offset + done));
        if (count < 0 && errno == EINTR) continue;
        if (count < 0) return errno == ENOSPC || errno == EDQUOT ? SQLITE_FULL : SQLITE_IOERR_WRITE;
        if (count == 0) return SQLITE_IOERR_WRITE;
        done += (int)count;
    }
    return SQLITE_OK;
}

static int pulse_sqlite3_unnamed_truncate(sqlite3_file *file, sqlite3_int64 size) {
    struct pulse_sqlite3_unnamed_file *self = (struct pulse_sqlite3_unnamed_file *)file;
    while (ftruncate(self->descriptor, (off_t)size) != 0) {
        if (errno != EINTR) return SQLITE_IOERR_TRUNCATE;
    }
    return SQLITE_OK;
}

/// Nothing to make durable: the file goes with the process.
static int pulse_sqlite3_unnamed_sync(sqlite3_file *file, int flags) {
    (void)file; (void)flags;
    return SQLITE_OK;
}

static int pulse_sqlite3_unnamed_size(sqlite3_file *file, sqlite3_int64 *size) {
    struct pulse_sqlite3_unnamed_file *self = (struct pulse_sqlite3_unnamed_file *)file;
    struct stat info;
    if (fstat(self->descriptor, &info) != 0) return SQLITE_IOERR_FSTAT;
    *size = (sqlite3_int64)info.st_size;
    return SQLITE_OK;
}

/// No other connection or process can open the file: every lock is granted.
static int pulse_sqlite3_unnamed_lock(sqlite3_file *file, int level) {
    (void)file; (void)level;
    return SQLITE_OK;
}

static int pulse_sqlite3_unnamed_reserved(sqlite3_file *file, int *reserved) {
    (void)file;
    *reserved = 0;
    return SQLITE_OK;
}

static int pulse_sqlite3_unnamed_control(sqlite3_file *file, int operation, void *argument) {
    (void)file; (void)operation; (void)argument;
    return SQLITE_NOTFOUND;
}

/// The unix VFS's default sector size.
static int pulse_sqlite3_unnamed_sector_size(sqlite3_file *file) {
    (void)file;
    return 4096;
}

/// As the unix VFS says of its files by default (powersafe overwrite).
static int pulse_sqlite3_unnamed_characteristics(sqlite3_file *file) {
    (void)file;
    return SQLITE_IOCAP_POWERSAFE_OVERWRITE;
}

static const sqlite3_io_methods pulse_sqlite3_unnamed_methods = {
    1,
    pulse_sqlite3_unnamed_close,
    pulse_sqlite3_unnamed_read,
    pulse_sqlite3_unnamed_write,
    pulse_sqlite3_unnamed_truncate,
    pulse_sqlite3_unnamed_sync,
    pulse_sqlite3_unnamed_size,
    pulse_sqlite3_unnamed_lock,
    pulse_sqlite3_unnamed_lock,
    pulse_sqlite3_unnamed_reserved,
    pulse_sqlite3_unnamed_control,
    pulse_sqlite3_unnamed_sector_size,
    pulse_sqlite3_unnamed_characteristics,
    0, 0, 0, 0, 0, 0
};

/// A new file without a name in the temporary directory, or -1 where there is none.
static inline int pulse_sqlite3_open_unnamed_temporary(struct pulse_sqlite3_vfs *self) {
    const char *directory = pulse_sqlite3_temporary_directory();
    if (directory == 0) return -1;
    int descriptor = self->openUnnamed(directory);
    // Standard input, output or error was closed: a stray write to it would land in the
    // file. The unix VFS knows how to plug that hole.
    if (descriptor >= 0 && descriptor <= 2) {
        close(descriptor);
        return -1;
    }
    return descriptor;
}

static int pulse_sqlite3_vfs_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *outFlags) {
    struct pulse_sqlite3_vfs *self = (struct pulse_sqlite3_vfs *)vfs;
    sqlite3_vfs *underlying = self->underlying;
    if (!(flags & SQLITE_OPEN_DELETEONCLOSE)) return underlying->xOpen(underlying, name, file, flags, outFlags);
    self->hold();
    int unnamed = name == 0 ? pulse_sqlite3_open_unnamed_temporary(self) : -1;
    int status;
    if (unnamed >= 0) {
        struct pulse_sqlite3_unnamed_file *opened = (struct pulse_sqlite3_unnamed_file *)file;
        memset(opened, 0, sizeof *opened);
        opened->descriptor = unnamed;
        opened->base.pMethods = &pulse_sqlite3_unnamed_methods;
        if (outFlags) *outFlags = flags;
        status = SQLITE_OK;
    } else {
        const char *directory = name == 0 ? pulse_sqlite3_temporary_directory() : 0;
        if (directory != 0 && self->keepsRemovedFiles(directory)) {
            status = SQLITE_CANTOPEN;
        } else {
            status = underlying->xOpen(underlying, name, file, flags, outFlags);
        }
    }
    self->release();
    return status;
}

/// Registers the VFS above, named "pulse-archive", as the default for connections opened
/// after it. Every other entry, `pAppData` included, is the default VFS's own, so its
/// functions see what they expect; its open receives its own structure, and each file has
/// room for the larger of the two kinds of file.
static inline int pulse_sqlite3_register_vfs(void *storage, void (*hold)(void), void (*release)(void),
                                             int (*keepsRemovedFiles)(const char *directory), int (*openUnnamed)(const char *directory)) {
    struct pulse_sqlite3_vfs *self = (struct pulse_sqlite3_vfs *)storage;
    sqlite3_vfs *underlying = sqlite3_vfs_find(0);
    if (underlying == 0) return SQLITE_ERROR;
    self->vfs = *underlying;
    self->vfs.pNext = 0;
    self->vfs.zName = "pulse-archive";
    self->vfs.xOpen = pulse_sqlite3_vfs_open;
    if (self->vfs.szOsFile < (int)sizeof(struct pulse_sqlite3_unnamed_file)) self->vfs.szOsFile = (int)sizeof(struct pulse_sqlite3_unnamed_file);
    self->underlying = underlying;
    self->hold = hold;
    self->release = release;
    self->keepsRemovedFiles = keepsRemovedFiles;
    self->openUnnamed = openUnnamed;
    return sqlite3_vfs_register(&self->vfs, 1);
}
#endif
