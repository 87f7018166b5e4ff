#ifndef PULSE_CSQLITE_SHIM_H
#define PULSE_CSQLITE_SHIM_H
#include <sqlite3.h>

/// sqlite3_config is variadic, which Swift cannot call: this is the one call we need. Memory
/// statistics take a global mutex on every allocation; nothing here reads them. Must run
/// before the first connection opens.
static inline int pulse_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
