// per_rank_collective_results.c — what a collective leaves in its receive buffer is the same
// on every rank only for some collectives (rules: a function's "received"). A prefix
// (MPI_Scan, MPI_Exscan: each rank's offset), a scatter's or an all-to-all's part, a
// reduce-scatter's block, and a rooted reduction's or gather's result (defined at the root
// only) differ per rank: a branch on them around a collective, or one as a collective's count
// or root, is a divergence. What MPI_Allreduce, MPI_Bcast and MPI_Allgather deliver is the
// same on every rank: the twins that agree on the value first stay quiet.
#include <mpi.h>

void prefix_offsets(MPI_Comm comm, int n) {
  int off = 0, pos = 0, one = 1;
  MPI_Exscan(&n, &off, 1, MPI_INT, MPI_SUM, comm);
  if (off == 0) /* only the first rank (and ranks after empty ones) */
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
  MPI_Scan(&one, &pos, 1, MPI_INT, MPI_SUM, comm);
  if (pos > 2)
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
}

void prefix_nonblocking(MPI_Comm comm, int n) {
  int off = 0;
  MPI_Request req;
  MPI_Iexscan(&n, &off, 1, MPI_INT, MPI_SUM, comm, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  if (off > 0)
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
}

/* a local first made uniform, then overwritten by a prefix */
void uniform_then_prefix(MPI_Comm comm, int me, int n) {
  int v = me;
  MPI_Bcast(&v, 1, MPI_INT, 0, comm);
  if (v)
    MPI_Barrier(comm);
  MPI_Exscan(&n, &v, 1, MPI_INT, MPI_SUM, comm);
  if (v)
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
}

void scattered_part(MPI_Comm comm, const int *counts, const int *roots, int *buf) {
  int mine = 0, root = 0;
  MPI_Scatter(counts, 1, MPI_INT, &mine, 1, MPI_INT, 0, comm);
  MPI_Bcast(buf, mine, MPI_INT, 0, comm); // expected-warning{{rank-dependent-argument}}
  MPI_Scatter(roots, 1, MPI_INT, &root, 1, MPI_INT, 0, comm);
  MPI_Bcast(buf, 1, MPI_INT, root, comm); // expected-warning{{rank-dependent-argument}}
}

void exchanged_parts(MPI_Comm comm, int *sendc, int *buf, const int *block) {
  int recvc[64];
  int piece = 0;
  MPI_Alltoall(sendc, 1, MPI_INT, recvc, 1, MPI_INT, comm);
  MPI_Bcast(buf, recvc[0], MPI_INT, 0, comm); // expected-warning{{rank-dependent-argument}}
  MPI_Reduce_scatter_block(block, &piece, 1, MPI_INT, MPI_SUM, comm);
  if (piece)
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
}

void rooted_results(MPI_Comm comm, double x, int n) {
  double sum = 0.0;
  int all[64];
  MPI_Reduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
  if (sum > 10.0) /* the root's sum; the others' sum is still 0 */
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
  MPI_Gather(&n, 1, MPI_INT, all, 1, MPI_INT, 0, comm);
  if (all[1] > 0)
    MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
}

/* the twins: agreed first, or delivered alike */
void agreed_results(MPI_Comm comm, int me, int n, const int *counts, int *buf) {
  int off = 0, last = 0, any = 0, mine = 0, all[64];
  MPI_Exscan(&n, &off, 1, MPI_INT, MPI_SUM, comm);
  MPI_Allreduce(&off, &last, 1, MPI_INT, MPI_MAX, comm);
  if (last == 0)
    MPI_Barrier(comm);
  int flag = me == 1;
  MPI_Allreduce(&flag, &any, 1, MPI_INT, MPI_LOR, comm);
  if (any)
    MPI_Barrier(comm);
  MPI_Scatter(counts, 1, MPI_INT, &mine, 1, MPI_INT, 0, comm);
  MPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_INT, MPI_MAX, comm);
  MPI_Bcast(buf, mine, MPI_INT, 0, comm);
  MPI_Allgather(&n, 1, MPI_INT, all, 1, MPI_INT, comm);
  if (all[0] > 0)
    MPI_Barrier(comm);
  MPI_Exscan(&n, &off, 1, MPI_INT, MPI_SUM, comm);
  MPI_Bcast(&off, 1, MPI_INT, 0, comm); /* every rank now has the root's offset */
  if (off)
    MPI_Barrier(comm);
}

void agreed_nonblocking(MPI_Comm comm, int me) {
  int flag = me == 0, any = 0;
  MPI_Request req;
  MPI_Iallreduce(&flag, &any, 1, MPI_INT, MPI_LOR, comm, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  if (any)
    MPI_Barrier(comm);
}
