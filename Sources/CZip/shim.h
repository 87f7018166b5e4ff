#ifndef PULSE_CZIP_SHIM_H
#define PULSE_CZIP_SHIM_H
#include <zip.h>
#endif
