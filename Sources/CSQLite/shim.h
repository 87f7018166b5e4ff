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
/// SQLite's default VFS with one change: a file it deletes on close (the spill of an unnamed
/// database, a sort's run, a statement journal) is created and unlinked between `hold` and
/// `release`. The unix VFS unlinks such a file right after creating it, so a process that ends
/// in between leaves it named in the temporary directory, where nothing ever removes it; with
/// the caller's hold being the lock an interruption takes before it ends the process, that
/// moment no longer exists. The storage is the caller's (see `pulse_sqlite3_vfs_size`): a
/// static here would be one per module that inlines the registration.
struct pulse_sqlite3_vfs {
    /// First, so SQLite's `sqlite3_vfs *` is this structure's address.
    sqlite3_vfs vfs;
    sqlite3_vfs *underlying;
    void (*hold)(void);
    void (*release)(void);
};

static inline size_t pulse_sqlite3_vfs_size(void) { return sizeof(struct pulse_sqlite3_vfs); }

static int pulse_sqlite3_vfs_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file, int flags, int *outFlags) {
    struct pulse_sqlite3_vfs *self = (struct pulse_sqlite3_vfs *)vfs;
    sqlite3_vfs *underlying = self->underlying;
    if (!(flags & SQLITE_OPEN_DELETEONCLOSE)) return underlying->xOpen(underlying, name, file, flags, outFlags);
    self->hold();
    int status = underlying->xOpen(underlying, name, file, flags, outFlags);
    self->release();
    return status;
}

/// Registers the VFS above, named "pulse-archive", as the default for connections opened
/// after it. Every other entry, `pAppData` included, is the default VFS's own, so its
/// functions see what they expect; its open receives its own structure.
static inline int pulse_sqlite3_register_vfs(void *storage, void (*hold)(void), void (*release)(void)) {
    struct pulse_sqlite3_vfs *self = (struct pulse_sqlite3_vfs *)storage;
    sqlite3_vfs *underlying = sqlite3_vfs_find(0);
    if (underlying == 0) return SQLITE_ERROR;
    self->vfs = *underlying;
    self->vfs.pNext = 0;
    self->vfs.zName = "pulse-archive";
    self->vfs.xOpen = pulse_sqlite3_vfs_open;
    self->underlying = underlying;
    self->hold = hold;
    self->release = release;
    return sqlite3_vfs_register(&self->vfs, 1);
}
#endif
