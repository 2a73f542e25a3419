// else_if_fallthrough.c — an else-if chain over rank values with no final else: every arm
// issues the same gather, so ranks 0, 1 and 2 agree, and only the ranks the chain does not
// name (3 and up) skip it. One finding, at the first arm, naming the values, not one per
// arm. Its correct twin ends the chain with an else that issues the same; a chain whose arms
// issue different collectives is still reported arm by arm.
#include <mpi.h>

int main(int argc, char **argv) {
  int rank, v = 1, out[4];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    MPI_Gather(&v, 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  else if (rank == 1)
    MPI_Gather(&v, 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD);
  else if (rank == 2)
    MPI_Gather(&v, 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD);

  /* the twin: a final else, every rank gathers */
  if (rank == 0)
    MPI_Gather(&v, 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD);
  else if (rank == 1)
    MPI_Gather(&v, 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD);
  else
    MPI_Gather(&v, 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_WORLD);

  /* arms that differ: each differing branch is its own finding */
  if (rank == 0)
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  else if (rank == 1)
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  MPI_Finalize();
  return 0;
}
