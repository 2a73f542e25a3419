// split_own_rank.c — MPI_Comm_split(world, rank, 0, &self) with rank world's own rank gives
// every rank a communicator of its own (lammps ReadDump::setup_reader splits by `me` when each
// rank reads its own files): a collective on it has one member, so a per-rank count is the
// same on all of it and lint must stay quiet. Reported: a color that groups ranks (rank / 2),
// the collective on the world, a communicator also made by a dup, a color that is not the rank
// any more. A branch on the rank around collectives on such a communicator cannot diverge
// either (each rank that issues one waits for nobody): quiet, but reported with a rank / 2 color
// or a collective on the world beside it.
#include <mpi.h>

void own_rank(void) {
  int rank, buf[64];
  MPI_Comm self;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = rank % 64 + 1;
  MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &self);
  MPI_Bcast(buf, n, MPI_INT, 0, self);
  MPI_Comm_free(&self);
}

void pairs(void) {
  int rank, buf[64];
  MPI_Comm two;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = rank % 64 + 1;
  MPI_Comm_split(MPI_COMM_WORLD, rank / 2, 0, &two);
  MPI_Bcast(buf, n, MPI_INT, 0, two); // expected-warning{{rank-dependent-argument}}
  MPI_Comm_free(&two);
}

void on_world(void) {
  int rank, buf[64];
  MPI_Comm self;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = rank % 64 + 1;
  MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &self);
  MPI_Bcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD); // expected-warning{{rank-dependent-argument}}
  MPI_Comm_free(&self);
}

void or_dup(int whole) {
  int rank, buf[64];
  MPI_Comm c;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = rank % 64 + 1;
  if (whole)
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
  else
    MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &c);
  MPI_Bcast(buf, n, MPI_INT, 0, c); // expected-warning{{rank-dependent-argument}}
  MPI_Comm_free(&c);
}

void color_changed(void) {
  int rank, buf[64];
  MPI_Comm c;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int n = rank % 64 + 1;
  rank = rank / 2;
  MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &c);
  MPI_Bcast(buf, n, MPI_INT, 0, c); // expected-warning{{rank-dependent-argument}}
  MPI_Comm_free(&c);
}

void branch_own(void) {
  int rank, v = 0;
  MPI_Comm self;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &self);
  if (rank % 3 == 0)
    MPI_Bcast(&v, 1, MPI_INT, 0, self);
  MPI_Comm_free(&self);
}

void branch_pairs(void) {
  int rank, v = 0;
  MPI_Comm two;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, rank / 2, 0, &two);
  if (rank % 3 == 0)
    MPI_Bcast(&v, 1, MPI_INT, 0, two); // expected-warning{{rank-divergent-collective}}
  MPI_Comm_free(&two);
}

void branch_also_world(void) {
  int rank, v = 0;
  MPI_Comm self;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &self);
  if (rank % 3 == 0) {
    MPI_Bcast(&v, 1, MPI_INT, 0, self); // expected-warning{{rank-divergent-collective}}
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Comm_free(&self);
}
