// lammps_irregular_counts.cpp — reduced from lammps src/irregular.cpp (Irregular::create_atom,
// create_data, create_data_grouped, lines 307-401): work2[i] = 1 for every rank i, then
// MPI_Reduce_scatter(work1, &nrecv_proc, work2, ...), then work2 reused for offsets that differ
// by rank. The member's fact is rank-dependent, but the counts the call reads were all just
// overwritten alike: the loop runs to nprocs, which only MPI_Comm_size(world, &nprocs) writes.
// work1, the send buffer, may differ by rank. Still reported: a count changed after the
// fill, a fill to a bound that is not the size, a fill of a rank value or only on some ranks,
// a method called in between (it may write the member), a size also set otherwise, and a
// local counts array filled to the size of another communicator, changed by a
// later round of the fill loop, or changed after the call in a loop around it; a plan's
// counts (through a pointer) changed after the fill.
#include <mpi.h>
#include <stdlib.h>

class Irregular {
 public:
  explicit Irregular(MPI_Comm w) : world(w) {
    MPI_Comm_rank(world, &me);
    MPI_Comm_size(world, &nprocs);
    work1 = (int *)malloc(nprocs * sizeof(int));
    work2 = (int *)malloc(nprocs * sizeof(int));
    num_send = (int *)malloc(nprocs * sizeof(int));
  }
  int create_atom(int n, const int *sizes, const int *proclist);
  int count_changed(int n, const int *proclist);
  int short_bound(int n, const int *proclist);
  int rank_fill(int n, const int *proclist);
  int some_ranks(int n, const int *proclist);
  int method_between(int n, const int *proclist);
  void reset();

 private:
  int offsets(int n, const int *sizes, const int *proclist);
  MPI_Comm world;
  int me, nprocs;
  int *work1, *work2;
  int nrecv_proc;
  int *num_send;
};

// the send buffer's entries are per rank; only the counts must agree
int Irregular::create_atom(int n, const int *sizes, const int *proclist) {
  int i;
  for (i = 0; i < nprocs; i++) {
    work1[i] = 0;
    work2[i] = 1;
  }
  for (i = 0; i < n; i++) work1[proclist[i]] = 1;
  work1[me] = 0;
  MPI_Reduce_scatter(work1, &nrecv_proc, work2, MPI_INT, MPI_SUM, world);
  return offsets(n, sizes, proclist);
}

// after the collective work2 holds this rank's offsets: the member's fact is rank-dependent
int Irregular::offsets(int n, const int *sizes, const int *proclist) {
  int i, nsend_proc = 0;
  for (i = 0; i < nprocs; i++) work1[i] = 0;
  for (i = 0; i < n; i++) work1[proclist[i]] += sizes[i];
  for (i = 0; i < nprocs; i++)
    if (work1[i]) num_send[nsend_proc++] = work1[i];
  work2[0] = 0;
  for (i = 1; i < nsend_proc; i++) work2[i] = work2[i - 1] + num_send[i - 1];
  return nrecv_proc;
}

int Irregular::count_changed(int n, const int *proclist) {
  for (int i = 0; i < nprocs; i++) work2[i] = 1;
  work2[0] = n;
  MPI_Reduce_scatter(work1, &nrecv_proc, work2, MPI_INT, MPI_SUM, world); // expected-warning{{rank-dependent-argument}}
  return proclist[0];
}

int Irregular::short_bound(int n, const int *proclist) {
  for (int i = 0; i < n; i++) work2[i] = 1;
  MPI_Reduce_scatter(work1, &nrecv_proc, work2, MPI_INT, MPI_SUM, world); // expected-warning{{rank-dependent-argument}}
  return proclist[0];
}

int Irregular::rank_fill(int n, const int *proclist) {
  for (int i = 0; i < nprocs; i++) work2[i] = proclist[n];
  MPI_Reduce_scatter(work1, &nrecv_proc, work2, MPI_INT, MPI_SUM, world); // expected-warning{{rank-dependent-argument}}
  return 0;
}

int Irregular::some_ranks(int n, const int *proclist) {
  if (me == 0)
    for (int i = 0; i < nprocs; i++) work2[i] = 1;
  MPI_Reduce_scatter(work1, &nrecv_proc, work2, MPI_INT, MPI_SUM, world); // expected-warning{{rank-dependent-argument}}
  return proclist[n];
}

int Irregular::method_between(int n, const int *proclist) {
  for (int i = 0; i < nprocs; i++) work2[i] = 1;
  offsets(n, proclist, proclist);
  MPI_Reduce_scatter(work1, &nrecv_proc, work2, MPI_INT, MPI_SUM, world); // expected-warning{{rank-dependent-argument}}
  return 0;
}

// A size that is not only the size query's: nothing is known of the loop's bound.
class Resized {
 public:
  explicit Resized(MPI_Comm w) : world(w) {
    MPI_Comm_size(world, &nprocs);
    counts = (int *)malloc(nprocs * sizeof(int));
  }
  void shrink(int n) { nprocs = n; }
  void exchange(int *sendbuf, int *recv, int me) {
    for (int i = 0; i < nprocs; i++) counts[i] = 1;
    MPI_Reduce_scatter(sendbuf, recv, counts, MPI_INT, MPI_SUM, world); // expected-warning{{rank-dependent-argument}}
    counts[0] = me;
  }

 private:
  MPI_Comm world;
  int nprocs;
  int *counts;
};

// A local counts array, refilled before each collective after per-rank use.
static void local_counts(MPI_Comm comm, MPI_Comm other, int *sendbuf, int *recv) {
  int me, size, osize;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &size);
  MPI_Comm_size(other, &osize);
  int *counts = (int *)malloc(size * sizeof(int));
  counts[0] = me;
  for (int i = 0; i < size; i++) counts[i] = 1;
  MPI_Reduce_scatter(sendbuf, recv, counts, MPI_INT, MPI_SUM, comm);
  counts[0] = me;
  for (int i = 0; i < osize; i++) counts[i] = 1;
  MPI_Reduce_scatter(sendbuf, recv, counts, MPI_INT, MPI_SUM, comm); // expected-warning{{rank-dependent-argument}}
  for (int i = 0; i < size; i++) counts[i] = 1;
  for (int step = 0; step < 3; step++) { // the second round reads what the first one left
    MPI_Reduce_scatter(sendbuf, recv, counts, MPI_INT, MPI_SUM, comm); // expected-warning{{rank-dependent-argument}}
    counts[step] = me;
  }
  for (int i = 0; i < size; i++) {
    counts[i] = 1;
    counts[0] = me; // a later round overwrites the first count
  }
  MPI_Reduce_scatter(sendbuf, recv, counts, MPI_INT, MPI_SUM, comm); // expected-warning{{rank-dependent-argument}}
  free(counts);
}

// A plan behind a pointer: the fill of pl->counts counts, and so does a write after it.
struct Plan {
  int *counts;
};

static void plan_exchange(MPI_Comm comm, Plan *pl, int *sendbuf, int *recv) {
  int size;
  MPI_Comm_size(comm, &size);
  for (int i = 0; i < size; i++) pl->counts[i] = 1;
  MPI_Reduce_scatter(sendbuf, recv, pl->counts, MPI_INT, MPI_SUM, comm);
}

static void plan_changed(MPI_Comm comm, Plan *pl, int *sendbuf, int *recv, int me) {
  int size;
  MPI_Comm_size(comm, &size);
  for (int i = 0; i < size; i++) pl->counts[i] = 1;
  pl->counts[0] = me;
  MPI_Reduce_scatter(sendbuf, recv, pl->counts, MPI_INT, MPI_SUM, comm); // expected-warning{{rank-dependent-argument}}
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  int sizes[4] = {me, 1, 1, 1}, procs[4] = {0, me, 0, 1}, buf[4] = {0}, out = 0;
  Irregular irr(MPI_COMM_WORLD);
  irr.create_atom(4, sizes, procs);
  irr.count_changed(me, procs);
  irr.short_bound(me, procs);
  irr.rank_fill(1, procs);
  irr.some_ranks(1, procs);
  irr.method_between(4, procs);
  Resized r(MPI_COMM_WORLD);
  r.shrink(me + 1);
  r.exchange(buf, &out, me);
  local_counts(MPI_COMM_WORLD, MPI_COMM_SELF, buf, &out);
  Plan pl = {buf};
  plan_exchange(MPI_COMM_WORLD, &pl, buf, &out);
  plan_changed(MPI_COMM_WORLD, &pl, buf, &out, me);
  MPI_Finalize();
  return 0;
}
