// hdf5_pass_flag.c — reduced from hdf5 1.10.8's parallel tests (testpar/t_cache_image.c
// par_insert_cache_image, t_pread.c's nerrs): a rank whose own call failed records it in
// a pass flag (cleared) or an error counter (increased) and then skips the collective that
// the flag or counter guards. The finding is real but only after a failure, so each is
// tagged an error path. The twin with the flag also changed on the normal run is
// hdf5_pass_flag_normal.c.
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>

int pass = 1;    /* the test's flag: cleared when something failed */

/* a set-up that every path passes (pass = 1) is no change on a failure's behalf */
static void begin_test(void) { pass = 1; }

/* rank 0 waits for its helper process (POSIX's -1 is the failure) and clears the flag */
void insert_image(MPI_Comm comm, pid_t child) {
  int rank, status;
  MPI_Comm_rank(comm, &rank);
  begin_test();
  if (rank == 0) {
    if (waitpid(child, &status, 0) == -1) {
      fprintf(stderr, "can't wait on the helper\n");
      pass = 0;
    }
  }
  if (pass)
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}{{error-path}}
}

/* a local counter, increased only when a call inside a group failed */
int grouped_count(ncclComm_t comm, const float *buf, float *out, size_t n, cudaStream_t s) {
  int nerrs = 0;
  ncclGroupStart();
  if (ncclBroadcast(buf, out, n, ncclFloat, 0, comm, s) != ncclSuccess)
    nerrs++;
  if (ncclAllReduce(buf, out, n, ncclFloat, ncclSum, comm, s) != ncclSuccess)
    nerrs += 1;
  if (nerrs > 0)
    return nerrs; // expected-warning{{unbalanced-group}}{{error-path}}
  ncclGroupEnd();
  return 0;
}

/* a local flag, cleared when a call inside a group failed: the return leaves the group open
 * only after that failure */
int grouped(ncclComm_t comm, const float *buf, float *out, size_t n, cudaStream_t s) {
  int ok = 1;
  ncclGroupStart();
  if (ncclAllReduce(buf, out, n, ncclFloat, ncclSum, comm, s) != ncclSuccess)
    ok = 0;
  if (!ok)
    return 1; // expected-warning{{unbalanced-group}}{{error-path}}
  ncclGroupEnd();
  return 0;
}
