#ifndef PULSE_CZLIB_SHIM_H
#define PULSE_CZLIB_SHIM_H
#define _LARGEFILE64_SOURCE 1
#define _FILE_OFFSET_BITS 64
#include <zlib.h>
#endif
