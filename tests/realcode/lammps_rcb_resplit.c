// lammps_rcb_resplit.c — reduced from lammps src/rcb.cpp (RCB::compute, the recursion at
// lines 176-613): each level splits the current communicator into two halves by
// `me < procmid` and keeps its own half (`comm = comm_half`). Each rank's new communicator
// is its own group's part of the one it held, not a choice between communicators: the
// collectives on it are not "chosen by the rank". The trip count differs between the halves
// (they recurse a different number of levels), but proclower and procupper are set by the
// branch whose outcome is the color, so they are the same on every member of the communicator
// the loop's collectives run on: no finding. A collective on the world under the color's
// branch, one on the half under a branch on the rank itself, and a communicator picked under a
// rank branch from a split of another communicator are still reported.
#include <mpi.h>

static void bisect(MPI_Comm world, int me, int nprocs) {
  MPI_Comm comm, comm_half;
  double w = 1.0, tot = 0.0;
  MPI_Comm_dup(world, &comm);
  int proclower = 0, procupper = nprocs - 1;
  while (proclower != procupper) {
    int procmid = proclower + (procupper - proclower) / 2 + 1;
    MPI_Allreduce(&w, &tot, 1, MPI_DOUBLE, MPI_SUM, comm);
    int split;
    if (me < procmid) {
      procupper = procmid - 1;
      split = 0;
    } else {
      proclower = procmid;
      split = 1;
    }
    MPI_Comm_split(comm, split, me, &comm_half);
    MPI_Comm_free(&comm);
    comm = comm_half;
  }
  MPI_Comm_free(&comm);
}

/* the world is not split: ranks below procmid wait on it at every level, the others do not */
static void bisect_world(MPI_Comm world, int me, int nprocs) {
  MPI_Comm comm, comm_half;
  double w = 1.0, tot = 0.0;
  MPI_Comm_dup(world, &comm);
  int proclower = 0, procupper = nprocs - 1;
  while (proclower != procupper) {
    int procmid = proclower + (procupper - proclower) / 2 + 1;
    MPI_Allreduce(&w, &tot, 1, MPI_DOUBLE, MPI_SUM, comm); // expected-warning{{rank-divergent-collective}}
    int split;
    if (me < procmid) {
      procupper = procmid - 1;
      split = 0;
      MPI_Barrier(world); // expected-warning{{rank-divergent-collective}}
    } else {
      proclower = procmid;
      split = 1;
    }
    MPI_Comm_split(comm, split, me, &comm_half);
    MPI_Comm_free(&comm);
    comm = comm_half;
  }
  MPI_Comm_free(&comm);
}

/* me itself differs within each half: only the half's lowest rank enters the barrier */
static void bisect_lowest(MPI_Comm world, int me, int nprocs) {
  MPI_Comm comm, comm_half;
  MPI_Comm_dup(world, &comm);
  int proclower = 0, procupper = nprocs - 1;
  while (proclower != procupper) {
    int procmid = proclower + (procupper - proclower) / 2 + 1;
    if (me == proclower)
      MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
    int split;
    if (me < procmid) {
      procupper = procmid - 1;
      split = 0;
    } else {
      proclower = procmid;
      split = 1;
    }
    MPI_Comm_split(comm, split, me, &comm_half);
    MPI_Comm_free(&comm);
    comm = comm_half;
  }
  MPI_Comm_free(&comm);
}

int main(int argc, char **argv) {
  int me, nprocs, v = 1, s = 0;
  MPI_Comm other, mine = MPI_COMM_WORLD;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  bisect(MPI_COMM_WORLD, me, nprocs);
  bisect_world(MPI_COMM_WORLD, me, nprocs);
  bisect_lowest(MPI_COMM_WORLD, me, nprocs);
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &other);
  if (me < 2) /* ranks 0 and 1 take the split, the others stay on the world */
    mine = other;
  MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, mine); // expected-warning{{rank-dependent-argument}}
  MPI_Comm_free(&other);
  MPI_Finalize();
  return 0;
}
