// mpich_intercomm_root.c — reduced from mpich 4.0.2 test/mpi/coll/icbcast.c and
// test/mpi/include/mpicolltest.h (MTest_Bcast): on an intercommunicator the root's group
// passes MPI_ROOT on the root itself and MPI_PROC_NULL on its other ranks, the other group
// the root's rank in the remote group. The root argument differs by side by design: quiet
// in one call (the ?: of a designator). The thin wrappers are the MPI calls they forward to:
// a rank value as wrap_reduce's root is reported at the call, and the two sides of the
// `left` branch, each calling wrap_bcast with its own root, are compared like two direct
// MPI_Bcast calls, which lint still takes as rank-dependent (README, Limits). A designator
// beside a rank value in one call: the rank value still counts.
#include <mpi.h>

static int wrap_bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
  return MPI_Bcast(buf, count, t, root, comm);
}

static int wrap_reduce(const void *s, void *r, int count, int root, MPI_Comm comm) {
  return MPI_Reduce(s, r, count, MPI_INT, MPI_SUM, root, comm);
}

int main(int argc, char **argv) {
  int rank, wrank, left, buf[4] = {0}, out[4];
  MPI_Comm world_half, ic;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  left = wrank % 2;
  MPI_Comm_split(MPI_COMM_WORLD, left, wrank, &world_half);
  MPI_Intercomm_create(world_half, 0, MPI_COMM_WORLD, left ? 0 : 1, 12345, &ic);
  MPI_Comm_rank(ic, &rank);
  if (left)
    wrap_bcast(buf, 4, MPI_INT, (rank == 0) ? MPI_ROOT : MPI_PROC_NULL, ic); // expected-warning{{rank-divergent-collective}}
  else
    wrap_bcast(buf, 4, MPI_INT, 0, ic);
  /* both sides in one call: the root's group, then the remote group naming its rank 0 */
  MPI_Gather(buf, 1, MPI_INT, out, 1, MPI_INT, left ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic);
  /* a rank value as the root: the ranks name different roots */
  wrap_reduce(buf, out, 1, wrank % 2, MPI_COMM_WORLD); // expected-warning{{rank-dependent-argument}}
  /* a designator beside a rank value: the rank value still counts */
  MPI_Bcast(buf, 1, MPI_INT, left ? MPI_ROOT : wrank, ic); // expected-warning{{rank-dependent-argument}}
  MPI_Comm_free(&ic);
  MPI_Comm_free(&world_half);
  MPI_Finalize();
  return 0;
}
