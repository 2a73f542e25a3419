// rank_facts_edges.c — the buggy twin of fixtures/mpi/clean_rank_facts.c: conditions one
// step past the edges of [0, size), and a rank that the function also writes elsewhere (so
// it is no longer known to be the query's rank). Each skips the collective on some ranks.
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, size, r2, v = 1, s = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank < size - 1) /* the last rank skips it */
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  if (rank > 0) /* rank 0 skips it */
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  if (size > 1) /* uniform: not a rank condition at all */
    MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &r2);
  r2 = r2 + 1; /* no longer in [0, size) */
  if (r2 < size)
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  MPI_Finalize();
  return 0;
}
