// mpich_coll2_participants.c — reduced from mpich 4.0.2 test/mpi/coll/coll2.c:24-52
// (same shape in coll5.c, coll7.c, gatherv.c): at most MAX_PROCESSES ranks take part, but
// the gather runs on MPI_COMM_WORLD, so with more than MAX_PROCESSES ranks the others never
// enter it and the job hangs. Latent (mpich's testlist runs these with at most 5 ranks);
// a real finding of bench/realcode.sh that lint must keep reporting.
#include <mpi.h>

#define MAX_PROCESSES 10

int main(int argc, char **argv) {
  int rank, size, participants;
  int table[MAX_PROCESSES][MAX_PROCESSES];

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  participants = size > MAX_PROCESSES ? MAX_PROCESSES : size;
  if (MAX_PROCESSES % participants)
    MPI_Abort(MPI_COMM_WORLD, 1);
  if (rank < participants) {
    int block_size = MAX_PROCESSES / participants;
    int send_count = block_size * MAX_PROCESSES;
    MPI_Gather(MPI_IN_PLACE, send_count, MPI_INT, &table[0][0], send_count, MPI_INT, 0, // expected-warning{{rank-divergent-collective}}
               MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
