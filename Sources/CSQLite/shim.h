#ifndef PULSE_CSQLITE_SHIM_H
#define PULSE_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
