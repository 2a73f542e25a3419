// mpich_nonblocking3_prn_rank.c — the twin of mpich_nonblocking3_prn.c: a call of the pure
// PRNG on a rank value, a helper that passes a rank value on to it, and helpers whose return
// reads more than their parameters (a global set from the rank; a local assigned in a
// branch) stay rank-dependent at every call.
#include <mpi.h>

static int me;
static unsigned int gen_prn(unsigned int x) { return (279470273UL * (unsigned long)x) % 4294967291UL; }
static unsigned int next_case(unsigned int seq) { return gen_prn(seq) % 2; }
static unsigned int with_rank(unsigned int x) { return x + (unsigned)me; }
static unsigned int mix(unsigned int a, unsigned int b) {
  unsigned int t = a * 31u;
  t ^= b;
  return gen_prn(t) + t;
}
static unsigned int pick(unsigned int x) {
  unsigned int y = 0;
  if (x > 2 || me == 0)
    y = 1;
  return y;
}

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  me = rank;
  if (gen_prn(7 + (unsigned)rank) % 2)
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  if (next_case((unsigned)rank))
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  if (with_rank(3) % 2)
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  if (pick(1))
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  if (mix(1, (unsigned)rank) % 2) /* through a local assigned from the parameter */
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  MPI_Finalize();
  return 0;
}
