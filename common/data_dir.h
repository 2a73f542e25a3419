/* data_dir.h — the data a binary reads (rules, headers) found from where the binary is. */
#ifndef LOCKSTEP_DATA_DIR_H
#define LOCKSTEP_DATA_DIR_H

#include <stddef.h>

int ls_is_dir(const char *p); /* 1: p is a non-empty path naming a directory */
/* The directory of the running binary (/proc/self/exe without its last component) into
 * out[cap]; 0 on success, -1 when it cannot be read or does not fit. */
int ls_exe_dir(char *out, size_t cap);
/* A data directory: <dir of this binary>/../share/lockstep/NAME when it exists (installed),
 * else `build` (the source tree's), else `install` if they exist; NULL when none does. */
const char *ls_data_dir(const char *name, const char *build, const char *install);

#endif
