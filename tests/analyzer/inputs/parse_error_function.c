// parse_error_function.c — one function whose body does not parse (an unknown type, as
// when a generated header is missing): lint reports nothing in it and says it skipped it;
// the function beside it, which parses, keeps its finding.
#include <mpi.h>

void broken(MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  missing_handle_t h;
  if (rank == 0)
    MPI_Barrier(comm);
}

void intact(MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0)
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
}
