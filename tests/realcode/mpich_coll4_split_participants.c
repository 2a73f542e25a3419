// mpich_coll4_split_participants.c — reduced from mpich 4.0.2 test/mpi/coll/coll4.c:25-51:
// with more than MAX_PROCESSES ranks the world is split by `rank < MAX_PROCESSES` and
// participants = MAX_PROCESSES, else comm is a dup of the world and participants = size;
// `if (rank < participants)` then scatters on comm. Along the split the condition is the
// color (every member of comm takes the branch, the others are in the other communicator);
// along the dup it is `rank < size`, true on every rank. Quiet. Each branch is judged by the
// communicator and the values that reach it along each way: a condition that is not the
// color there (participants - 1), one not decided along the dup, a participants that ranks
// may set differently after the split, and a color variable changed after the split are
// reported.
#include <mpi.h>

#define MAX_PROCESSES 10

static int table[MAX_PROCESSES][MAX_PROCESSES], row[MAX_PROCESSES];

int main(int argc, char **argv) {
  int rank, size, participants;
  MPI_Comm comm;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  comm = MPI_COMM_WORLD;
  if (size > MAX_PROCESSES) {
    participants = MAX_PROCESSES;
    MPI_Comm_split(MPI_COMM_WORLD, rank < MAX_PROCESSES, rank, &comm);
  } else {
    participants = size;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  }
  if ((rank < participants))
    MPI_Scatter(&table[0][0], MAX_PROCESSES, MPI_INT, &row[0], MAX_PROCESSES, MPI_INT, 0, comm);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}

/* one rank short: rank MAX_PROCESSES - 1 is in comm but skips the scatter */
void short_by_one(void) {
  int rank, size, participants;
  MPI_Comm comm;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > MAX_PROCESSES) {
    participants = MAX_PROCESSES;
    MPI_Comm_split(MPI_COMM_WORLD, rank < MAX_PROCESSES, rank, &comm);
  } else {
    participants = size;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  }
  if (rank < participants - 1)
    MPI_Scatter(&table[0][0], MAX_PROCESSES, MPI_INT, &row[0], MAX_PROCESSES, MPI_INT, 0, comm); // expected-warning{{rank-divergent-collective}}
  MPI_Comm_free(&comm);
}

/* along the dup every rank is in comm, but only size - 1 of them scatter */
void dup_not_decided(void) {
  int rank, size, participants;
  MPI_Comm comm;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > MAX_PROCESSES) {
    participants = MAX_PROCESSES;
    MPI_Comm_split(MPI_COMM_WORLD, rank < MAX_PROCESSES, rank, &comm);
  } else {
    participants = size - 1;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  }
  if (rank < participants)
    MPI_Scatter(&table[0][0], MAX_PROCESSES, MPI_INT, &row[0], MAX_PROCESSES, MPI_INT, 0, comm); // expected-warning{{rank-divergent-collective}}
  MPI_Comm_free(&comm);
}

/* rank 0 lowers participants after the split: the members of comm disagree */
void set_after_split(void) {
  int rank, participants = MAX_PROCESSES;
  MPI_Comm comm;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, rank < MAX_PROCESSES, rank, &comm);
  if (rank == 0)
    participants = 0;
  if (rank < participants)
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
  MPI_Comm_free(&comm);
}

/* the color's own variable changed after the split: no longer the color */
void color_changed(void) {
  int rank, is_reader;
  MPI_Comm comm;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  is_reader = rank % 2;
  MPI_Comm_split(MPI_COMM_WORLD, is_reader, rank, &comm);
  is_reader = rank % 3 == 1;
  if (is_reader)
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
  MPI_Comm_free(&comm);
}

/* the color's variable kept: each side on its own communicator */
void color_kept(void) {
  int rank, is_reader;
  MPI_Comm comm;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  is_reader = rank % 2;
  MPI_Comm_split(MPI_COMM_WORLD, is_reader, rank, &comm);
  if (is_reader)
    MPI_Barrier(comm);
  MPI_Comm_free(&comm);
}
