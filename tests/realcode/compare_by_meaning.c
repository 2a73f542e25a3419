// compare_by_meaning.c — alternatives of a rank branch compared by what they issue: a helper
// by the collectives it issues with the arguments it is given (the root's side calls
// MPI_Bcast itself, the others through a wrapper), and each communicator's calls on their
// own (the two sides interleave two communicators differently but issue the same sequence
// on each), and two loops whose constant trip counts are equal (`3 * 10` and `5 * 6`
// iterations). Quiet. Reported: loops of 30 and 31 iterations, a wrapper that passes
// another count, one that issues one more collective, one that changes its parameter
// before the call, and a side whose calls on one communicator come in another order.
#include <mpi.h>

static void bcast_int(int *v, int n, MPI_Comm comm) { MPI_Bcast(v, n, MPI_INT, 0, comm); }

static void bcast_twice(int *v, int n, MPI_Comm comm) {
  MPI_Bcast(v, n, MPI_INT, 0, comm);
  MPI_Barrier(comm);
}

static void bcast_count2(int *v, MPI_Comm comm) { MPI_Bcast(v, 2, MPI_INT, 0, comm); }

static void bcast_half(int *v, int n, MPI_Comm comm) {
  n = n / 2; /* the parameter is no longer the argument */
  MPI_Bcast(v, n, MPI_INT, 0, comm);
}

int main(int argc, char **argv) {
  int rank, v[4] = {0};
  MPI_Comm a, b;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  if (rank == 0)
    MPI_Bcast(v, 4, MPI_INT, 0, a);
  else
    bcast_int(v, 4, a);
  if (rank == 0) { /* per communicator the same: a gets one bcast, b one barrier */
    MPI_Bcast(v, 1, MPI_INT, 0, a);
    MPI_Barrier(b);
  } else {
    MPI_Barrier(b);
    MPI_Bcast(v, 1, MPI_INT, 0, a);
  }

  if (rank == 0) /* loops compared by their trip counts' values: 30 and 30 */
    for (int i = 0; i < 3 * 10; i++)
      MPI_Barrier(a);
  else
    for (int j = 1; j <= 5 * 6; ++j)
      MPI_Barrier(a);

  if (rank == 0)
    MPI_Bcast(v, 4, MPI_INT, 0, a); // expected-warning{{rank-divergent-collective}}
  else
    bcast_count2(v, a); /* 2 ints against 4 */
  if (rank == 0) /* 30 against 31 */
    for (int i = 0; i < 3 * 10; i++)
      MPI_Barrier(a); // expected-warning{{rank-divergent-collective}}
  else
    for (int j = 0; j <= 5 * 6; ++j)
      MPI_Barrier(a);
  if (rank == 0)
    MPI_Bcast(v, 4, MPI_INT, 0, a); // expected-warning{{rank-divergent-collective}}
  else
    bcast_twice(v, 4, a); /* and a barrier the root never enters */
  if (rank == 0)
    MPI_Bcast(v, 4, MPI_INT, 0, a); // expected-warning{{rank-divergent-collective}}
  else
    bcast_half(v, 4, a);
  if (rank == 0) {
    MPI_Bcast(v, 1, MPI_INT, 0, a); // expected-warning{{rank-divergent-collective}}
    MPI_Barrier(a);
  } else {
    MPI_Barrier(a);
    MPI_Bcast(v, 1, MPI_INT, 0, a);
  }
  MPI_Comm_free(&b);
  MPI_Comm_free(&a);
  MPI_Finalize();
  return 0;
}
