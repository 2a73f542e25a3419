// hdf5_pass_flag_normal.c — twin of hdf5_pass_flag.c: the same pass flags and error
// counters, each also changed on the normal run (a rank test, a reset under a branch, a
// computed value), so the code they guard is skipped without any call having failed: a
// normal-path finding, not tagged.
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>

int pass = 1;
int ready = 1;

/* the flag is also cleared by a rank test, not a failure */
void rank_clears(MPI_Comm comm, const char *name) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0 && MPI_File_delete(name, MPI_INFO_NULL) != MPI_SUCCESS)
    pass = 0;
  if (rank > 2)
    pass = 0;
  if (pass)
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
}

/* a local counter also increased on a count, not a failed call */
int grouped_count(ncclComm_t comm, const float *buf, float *out, size_t n, cudaStream_t s) {
  int nerrs = 0;
  ncclGroupStart();
  if (ncclBroadcast(buf, out, n, ncclFloat, 0, comm, s) != ncclSuccess)
    nerrs++;
  if (n > 1024)
    nerrs++;
  if (nerrs > 0)
    return nerrs; // expected-warning{{unbalanced-group}}
  ncclGroupEnd();
  return 0;
}

/* set on one side of a branch: not a set-up every path passes */
void reset_on_rank(MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    ready = 0;
  if (ready)
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
}

/* a local flag cleared on a count, not on a failed call */
int grouped(ncclComm_t comm, const float *buf, float *out, size_t n, cudaStream_t s) {
  int ok = 1;
  ncclGroupStart();
  if (ncclAllReduce(buf, out, n, ncclFloat, ncclSum, comm, s) != ncclSuccess)
    ok = 0;
  if (n == 0)
    ok = 0;
  if (!ok)
    return 1; // expected-warning{{unbalanced-group}}
  ncclGroupEnd();
  return 0;
}
