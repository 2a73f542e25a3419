// parity_pair_broken.c — the buggy twin of fixtures/mpi/clean_parity_pair.c: the second
// branch tests the same condition instead of its negation, issues a different count, or
// the condition's variable changes between the two branches; in each, some ranks issue the
// collective twice or not at all, or with another count.
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 1, s = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank % 2) /* the same condition twice: odd ranks issue it twice */
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  if (rank % 2)
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  if (rank % 2) /* another count on the other side */
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  if (!(rank % 2))
    MPI_Allreduce(&v, &s, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  int r = rank;
  if (r % 2) { /* r changes in between: ranks 1 and 2 issue it, 0 and 3 do not */
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
    r++;
  }
  if (!(r % 2))
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  MPI_Finalize();
  return 0;
}
