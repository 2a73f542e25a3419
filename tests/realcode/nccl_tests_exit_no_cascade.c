// nccl_tests_exit_no_cascade.c — reduced from nccl-tests a0b82b2 src/common.cu (run(),
// TimeTest's type loop, Barrier's last-thread election) and hdf5 1.10.8 src/H5FDmpio.c
// (H5FD__mpio_open): a rank-dependent early exit is one finding, where it skips the
// collectives; the ranks that go on compute the same values, so the loop bounds, thread
// indices and error codes they write afterwards are uniform. Before, every write after the
// exit took its condition, and each later loop or error check was a finding.
// Its twin nccl_tests_exit_then_rank_values.c keeps what must still be reported.
#include <mpi.h>
#include <nccl.h>

static int test_typenum = 3;

struct args {
  int thread, nThreads, nGpus;
};

static void barrier(struct args *a) {
  if (a->thread + 1 == a->nThreads) /* the last thread of each process */
    MPI_Barrier(MPI_COMM_WORLD);
}

static void time_test(struct args *a) {
  for (int i = 0; i < test_typenum; i++)
    barrier(a);
  if (a->nGpus > 1)
    barrier(a);
}

int run(struct args *a, int nThreads) {
  int rank, arch = 900;
  ncclUniqueId id;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    ncclResult_t res = ncclGetUniqueId(&id);
    if (res != ncclSuccess)
      return 1;
  }
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}{{error-path}}
  MPI_Allreduce(MPI_IN_PLACE, &arch, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (arch < 900)
    test_typenum = 2;
  for (int t = 0; t < nThreads; t++) {
    a[t].thread = t;
    a[t].nThreads = nThreads;
    a[t].nGpus = 1;
  }
  time_test(&a[0]);
  return 0;
}

/* the same with the condition and the call in one test */
int run_one_test(void) {
  int rank, ntypes = 3;
  ncclUniqueId id;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess)
    return 1;
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}{{error-path}}
  ntypes = 2;
  for (int i = 0; i < ntypes; i++)
    MPI_Barrier(MPI_COMM_WORLD);
  return 0;
}

/* hdf5's shape: the rank-0 error jumps to the cleanup; the later collective's own error
 * check is on a uniform result */
int mpio_open(MPI_Comm comm, MPI_File fh, MPI_Offset *size_out) {
  int mpi_rank, mpi_code, ret_value = 0;
  MPI_Offset file_size = 0;
  MPI_Comm_rank(comm, &mpi_rank);
  if (mpi_rank == 0) {
    if (MPI_SUCCESS != (mpi_code = MPI_File_get_size(fh, &file_size))) {
      ret_value = -1;
      goto done;
    }
  }
  if (MPI_SUCCESS != (mpi_code = MPI_Bcast(&file_size, (int)sizeof(MPI_Offset), MPI_BYTE, 0, comm))) { // expected-warning{{rank-divergent-collective}}{{error-path}}
    ret_value = -1;
    goto done;
  }
  MPI_Barrier(comm);
  *size_out = file_size;
done:
  return ret_value;
}
