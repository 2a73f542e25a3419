/* mpi_hooks.h — the MPI family's hooks, called by the PMPI wrappers that runtime/gen
 * generates from rules/mpi.json (ls_gen --role-macros; see recorder.h for the order).
 * The LS_ROLE_* macros receive the arguments whose roles struct ls_args has no field
 * for (v-variant count arrays, request arrays of the wait family); they park them in
 * this thread's scratch, which the per-thread guard keeps to one call at a time. */
#ifndef LOCKSTEP_MPI_HOOKS_H
#define LOCKSTEP_MPI_HOOKS_H

#include <mpi.h>

#include "recorder.h"

/* kind refinements of comm_split for the MPI creation calls (rules: comm_dup, comm_create) */
#ifndef LS_SUB_DUP
#define LS_SUB_DUP 16
#endif
#ifndef LS_SUB_CREATE
#define LS_SUB_CREATE 17
#endif
#ifndef LS_SUB_CREATE_GROUP /* comm_create not collective over the parent */
#define LS_SUB_CREATE_GROUP 18
#endif

struct ls_mpi_scratch {
  const int *counts;        /* role counts: one count per rank, summed into the fingerprint */
  MPI_Request *reqs;        /* role request_array */
  int nreqs;                /* role request_count */
  int *out_index;           /* role out_index */
  int *out_indices;         /* role out_indices */
  int *out_count;           /* role out_count */
  int *out_flag;            /* role out_flag */
  MPI_Comm *inout_comm;     /* role inout_comm (MPI_Comm_free) */
};
/* initial-exec: liblockstep is preloaded, so its TLS is static and this costs no call */
extern __thread struct ls_mpi_scratch ls_mpi_tl LS_HIDDEN
    __attribute__((tls_model("initial-exec")));

#define LS_ROLE_counts(c, x) (ls_mpi_tl.counts = (x))
#define LS_ROLE_request_array(c, x) (ls_mpi_tl.reqs = (x))
#define LS_ROLE_request_count(c, x) (ls_mpi_tl.nreqs = (x))
#define LS_ROLE_out_index(c, x) (ls_mpi_tl.out_index = (x))
#define LS_ROLE_out_indices(c, x) (ls_mpi_tl.out_indices = (x))
#define LS_ROLE_out_count(c, x) (ls_mpi_tl.out_count = (x))
#define LS_ROLE_out_flag(c, x) (ls_mpi_tl.out_flag = (x))
#define LS_ROLE_inout_comm(c, x) (ls_mpi_tl.inout_comm = (x))
/* rules "in_place": the buffer argument that, equal to MPI_IN_PLACE, switches the
 * fingerprint to other count/dtype arguments */
#define LS_IN_PLACE(buf) ((const void *)(buf) == (const void *)MPI_IN_PLACE)

/* Clears the scratch, fills the fingerprint in MPI terms (datatype and op as their
 * Fortran handles, equal in every process; summed count arrays), gives the call its
 * communicator and calls ls_call_enter, or skips the record (rank/size queries, waits
 * on requests that are not collectives'). */
LS_HIDDEN void ls_mpi_pre(struct ls_call *c);
/* Request bookkeeping, completion of non-blocking collectives, identity of new
 * communicators; then ls_call_exit. `rc` is passed through by the wrapper untouched. */
LS_HIDDEN void ls_mpi_post(struct ls_call *c, int64_t rc);

#endif
