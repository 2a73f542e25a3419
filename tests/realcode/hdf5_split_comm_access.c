// hdf5_split_comm_access.c — reduced from hdf5 1.10.8 testpar/t_file.c:57-110
// (test_split_comm_access): `is_old = mpi_rank % 2` is both the split color and the branch, so
// each side's collectives run on a communicator whose members all take that side
// (bench/RESULTS.md class F3): quiet. The same barrier under a condition that is not the
// color, or on MPI_COMM_WORLD, is still reported.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define VRFY(ok, msg)                                  \
  do {                                                 \
    if (!(ok)) {                                       \
      fprintf(stderr, "%s\n", msg);                    \
      MPI_Abort(MPI_COMM_WORLD, 1);                    \
    }                                                  \
  } while (0)

static void test_split_comm_access(void) {
  MPI_Comm comm;
  int mpi_rank, mpi_size, is_old, mrc, newrank, newprocs;
  MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  is_old = mpi_rank % 2;
  mrc = MPI_Comm_split(MPI_COMM_WORLD, is_old, mpi_rank, &comm);
  VRFY((mrc == MPI_SUCCESS), "");
  MPI_Comm_size(comm, &newprocs);
  MPI_Comm_rank(comm, &newrank);
  if (is_old) {
    mrc = MPI_Barrier(comm);
    VRFY((mrc == MPI_SUCCESS), "");
  } else {
    double v = newrank;
    mrc = MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, comm);
    VRFY((mrc == MPI_SUCCESS), "");
    mrc = MPI_Bcast(&v, 1, MPI_DOUBLE, 0, comm);
    VRFY((mrc == MPI_SUCCESS), "");
  }
  if (is_old == 0)
    MPI_Barrier(comm);
  if (mpi_rank < 2) /* not the color: ranks of one communicator differ */
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
  if (is_old) /* the color, but the whole world waits */
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  MPI_Comm_free(&comm);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  test_split_comm_access();
  MPI_Finalize();
  return 0;
}
