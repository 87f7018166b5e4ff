#ifndef PULSE_CZLIB_SHIM_H
#define PULSE_CZLIB_SHIM_H
#define _LARGEFILE64_SOURCE 1
#define _FILE_OFFSET_BITS 64
#include <zlib.h>

/* crc32_combine is a macro for crc32_combine64 where off_t is 64 bits (glibc with the defines
   above), which Swift cannot call by its name; C resolves it on every platform. */
static inline uLong pulse_crc32_combine(uLong crc1, uLong crc2, long long length2) {
    return crc32_combine(crc1, crc2, (z_off_t)length2);
}
#endif
