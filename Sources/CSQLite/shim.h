#ifndef PULSE_CSQLITE_SHIM_H
#define PULSE_CSQLITE_SHIM_H
#include <sqlite3.h>

/// sqlite3_config is variadic, which Swift cannot call: this is the one call we need. Memory
/// statistics take a global mutex on every allocation; nothing here reads them. Must run
/// before the first connection opens.
static inline int pulse_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
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
#endif
