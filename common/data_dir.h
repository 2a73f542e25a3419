/* data_dir.h — the data a binary reads (rules, headers) found from where the binary is. */
#ifndef LOCKSTEP_DATA_DIR_H
#define LOCKSTEP_DATA_DIR_H

int ls_is_dir(const char *p); /* 1: p is a non-empty path naming a directory */
/* A data directory: <dir of this binary>/../share/lockstep/NAME when it exists (installed),
 * else `build` (the source tree's), else `install` if they exist; NULL when none does. */
const char *ls_data_dir(const char *name, const char *build, const char *install);

#endif
