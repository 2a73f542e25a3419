// mpich_allgatherv4_split.c — reduced from mpich 4.0.2 test/mpi/coll/allgatherv4.c:92-104:
// the world is split by `rank == size - 1 ? 0 : 1` and `if (rank < size - 1) comm_tests(comm)`
// runs the tests on the new communicator. With 0 <= rank < size the condition is the color's
// predicate negated (rank < size - 1 is rank != size - 1), and comm_tests issues its
// collectives only on the communicator it is given: every member of that communicator takes
// the branch. Quiet. The same helper on the world, a helper that also uses the world, a
// condition that is not the color, and the condition after the variable was split again by
// another color are reported.
#include <mpi.h>

static void comm_tests(MPI_Comm comm) {
  int n = 0;
  for (int i = 0; i < 4; i++)
    MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT, MPI_SUM, comm);
  MPI_Barrier(comm);
}

static void tests_and_world(MPI_Comm comm) {
  comm_tests(comm);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  int comm_size, comm_rank;
  MPI_Comm comm;
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &comm_size);
  MPI_Comm_rank(MPI_COMM_WORLD, &comm_rank);
  comm_tests(MPI_COMM_WORLD);
  MPI_Comm_split(MPI_COMM_WORLD, (comm_rank == comm_size - 1) ? 0 : 1, 0, &comm);
  if (comm_rank < comm_size - 1)
    comm_tests(comm);
  if (comm_rank >= comm_size - 1) /* the last rank alone: its own communicator */
    MPI_Barrier(comm);
  if (comm_rank < comm_size - 1)
    comm_tests(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  if (comm_rank < comm_size - 1)
    tests_and_world(comm); // expected-warning{{rank-divergent-collective}}
  if (comm_rank < comm_size - 2) /* not the color: the last two ranks differ */
    comm_tests(comm); // expected-warning{{rank-divergent-collective}}
  MPI_Comm_free(&comm);
  /* the same variable split again, by another color (allgatherv4.c:111): each branch is
   * judged by the split that reaches it */
  MPI_Comm_split(MPI_COMM_WORLD, 0, comm_rank, &comm);
  comm_tests(comm);
  if (comm_rank < comm_size - 1) /* now every rank is in comm */
    comm_tests(comm); // expected-warning{{rank-divergent-collective}}
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
