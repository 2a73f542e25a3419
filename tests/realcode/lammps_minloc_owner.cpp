// lammps_minloc_owner.cpp — reduced from lammps 20220106 src/compute_reduce.cpp:385-398
// (ComputeReduce::compute_vector): each rank offers (value, me) to an MPI_MINLOC all-reduce
// and every rank learns the owner, then the owner broadcasts. pairme.proc holds the rank,
// pairall.proc the reduced (uniform) owner: lint must tell the two objects' fields apart
// (bench/RESULTS.md class F8). Broadcasting from pairme.proc would be wrong, and is reported.
#include <mpi.h>

class ComputeReduce {
 public:
  explicit ComputeReduce(MPI_Comm w) : world(w) { MPI_Comm_rank(world, &me); }
  void compute_vector(double *vector, const double *onevec, int nvalues);
  void wrong_root(double *vector);

 private:
  struct Pair {
    double value;
    int proc;
  };
  Pair pairme, pairall;
  MPI_Comm world;
  int me;
  int owner[16];
};

void ComputeReduce::compute_vector(double *vector, const double *onevec, int nvalues) {
  for (int m = 0; m < nvalues && m < 16; m++) {
    pairme.value = onevec[m];
    pairme.proc = me;
    MPI_Allreduce(&pairme, &pairall, 1, MPI_DOUBLE_INT, MPI_MINLOC, world);
    vector[m] = pairall.value;
    owner[m] = pairall.proc;
  }
  for (int m = 0; m < nvalues && m < 16; m++)
    MPI_Bcast(&vector[m], 1, MPI_DOUBLE, owner[m], world);
}

void ComputeReduce::wrong_root(double *vector) {
  MPI_Bcast(vector, 1, MPI_DOUBLE, pairme.proc, world); // expected-warning{{rank-dependent-argument}}
}

// Settings read on rank 0 into a struct behind a pointer, then broadcast field by field.
struct Settings {
  int nsteps;
  int every;
};

static void run(MPI_Comm world, Settings *s, double *buf) {
  int me;
  MPI_Comm_rank(world, &me);
  if (me == 0) {
    s->nsteps = 10 + me;
    s->every = 2;
  }
  MPI_Bcast(&s->nsteps, 1, MPI_INT, 0, world);
  for (int i = 0; i < s->nsteps; i++)
    MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_DOUBLE, MPI_SUM, world);
  if (s->every > 1) // never broadcast: rank 0's alone
    MPI_Barrier(world); // expected-warning{{rank-divergent-collective}}
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  double v[16] = {0}, one[16] = {0};
  ComputeReduce cr(MPI_COMM_WORLD);
  cr.compute_vector(v, one, 16);
  cr.wrong_root(v);
  Settings s = {0, 0};
  run(MPI_COMM_WORLD, &s, v);
  MPI_Finalize();
  return 0;
}
