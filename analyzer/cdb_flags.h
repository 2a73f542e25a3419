/* cdb_flags.h — compilation databases: the check of a compile_commands.json before libclang
 * reads it (cdb_check.c), and the arguments that clang cannot take as they are: flags only
 * GCC knows (dropped, with a note) and the include dirs an MPI compiler wrapper adds
 * implicitly (asked from the wrapper, once per wrapper; cdb_flags.c). */
#ifndef LOCKSTEP_CDB_FLAGS_H
#define LOCKSTEP_CDB_FLAGS_H

#include "lint.h"

/* Adjusts args (char*, arena strings) of one database entry compiled by `compiler` (the
 * entry's first argument): drops flags clang does not know and appends the wrapper's
 * include dirs. `db` names the database in notes. */
void ls_cdb_adjust(ls_arena *a, const char *db, const char *compiler, ls_vec *args);
/* Reads the compilation database at `path` and checks that it is a non-empty JSON array of
 * entries as libclang reads them (directory, file, command or arguments, output). 0 when it
 * is; else -1 after printing each problem (up to 10) as `path:line:col: error: ...`. */
int ls_cdb_validate(const char *path);
/* Releases the probe index and the caches. */
void ls_cdb_done(void);

#endif
