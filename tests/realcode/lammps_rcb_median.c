// lammps_rcb_median.c — reduced from lammps src/rcb.cpp (RCB::compute, the median search at
// lines 251-468, inside the bisection that re-splits its communicator each level). The
// branches around its MPI_Scan test sums that MPI_Allreduce delivered on the current half
// (wttot, med, tolerance) against bounds set by the split's own branch (procmid): the same
// on every member of that half, so the whole half takes the same side. The cut dimension the
// loop ends with (dim = best) is reset by `for (dim = 0; ...)` before the next level reads it.
// Still reported: a branch on the half's sum that each rank changes afterwards, on a value
// one rank sets, on the cut dimension each rank picks from its own points, and on a field of
// a rank's own record.
#include <mpi.h>

struct med { double totallo, wthi; int counthi, prochi; };

static void bisect(MPI_Comm world, int me, int nprocs, int n, const double *x, int variant) {
  MPI_Comm comm, comm_half;
  double wtsum = 0.0, wttot = 0.0, wtmax = 0.0, tolerance, wtok = 0.0, wtupto = 0.0;
  int dim = 0, best = 0;
  MPI_Comm_dup(world, &comm);
  int proclower = 0, procupper = nprocs - 1;
  while (proclower != procupper) {
    int procmid = proclower + (procupper - proclower) / 2 + 1;
    for (int i = 0; i < n; i++) {
      wtsum += x[i];
      if (x[i] > wtmax)
        wtmax = x[i];
    }
    MPI_Allreduce(&wtsum, &wttot, 1, MPI_DOUBLE, MPI_SUM, comm);
    MPI_Allreduce(&wtmax, &tolerance, 1, MPI_DOUBLE, MPI_MAX, comm);
    tolerance *= 1.0 + 1e-6;
    double targetlo = wttot * (procmid - proclower) / (procupper + 1 - proclower);
    for (dim = 0; dim < 3; dim++) {
      double wtlo = 0.0;
      while (1) {
        struct med medme, med;
        medme.totallo = x[dim];
        medme.wthi = x[1];
        medme.counthi = n;
        medme.prochi = me;
        MPI_Allreduce(&medme, &med, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
        if (wtlo + med.totallo >= targetlo)
          break;
        wtlo += med.totallo;
        if (med.counthi != 1 && wtlo + med.wthi >= targetlo) {
          wtok = me == med.prochi ? medme.wthi : 0.0;
          MPI_Scan(&wtok, &wtupto, 1, MPI_DOUBLE, MPI_SUM, comm);
          if (wtupto > targetlo - wtlo)
            wtok -= wtupto - (targetlo - wtlo);
          break;
        }
        wtlo += med.wthi;
        if (targetlo - wtlo <= tolerance)
          break;
      }
      if (x[dim] * me > 0.5)
        best = dim;
    }
    dim = best;
    if (variant == 2) { /* the half's sum, changed by each rank after the reduction */
      double tot = 0.0;
      MPI_Allreduce(&wtsum, &tot, 1, MPI_DOUBLE, MPI_SUM, comm);
      tot += x[0] * me;
      if (tot > targetlo)
        MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
    }
    if (variant == 3) { /* tolerance is reset by the half's first rank only */
      if (me == proclower)
        tolerance = 0.0;
      if (tolerance > 1.0)
        MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
    }
    if (variant == 4) { /* dim as the level ends: each rank's own best cut */
      if (dim == 2)
        MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
    }
    if (variant == 5) { /* a field of this rank's own median record */
      struct med own;
      own.totallo = x[0] * me;
      if (own.totallo > 1.0)
        MPI_Barrier(comm); // expected-warning{{rank-divergent-collective}}
    }
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
  int me, nprocs, variant = 0;
  double x[3];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  for (int i = 0; i < 3; i++) /* each rank's own points */
    x[i] = me + i;
  MPI_Bcast(&variant, 1, MPI_INT, 0, MPI_COMM_WORLD);
  bisect(MPI_COMM_WORLD, me, nprocs, 3, x, variant);
  MPI_Finalize();
  return 0;
}
