// nccl_tests_exit_then_rank_values.c — the twin of nccl_tests_exit_no_cascade.c: a rank-
// dependent early exit does not make later values rank-dependent, but it does not hide the
// ones that are: a rank branch after the exit, a value the exiting ranks write on their way
// out (a flag, an error code through a cleanup label), and a function with no collective
// after its exit, whose callers see what it leaves behind.
#include <mpi.h>
#include <nccl.h>

static int ntypes = 3, failed, nsteps = 1;

struct args {
  int nGpus;
};

static void bench(void) {
  for (int i = 0; i < ntypes; i++)
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
}

int run(struct args *a) {
  int rank;
  ncclUniqueId id;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess)
    return 1;
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}{{error-path}}
  if (rank == 1) /* a rank branch of its own after the exit */
    ntypes = 2;
  a->nGpus = rank % 2 + 1;
  if (a->nGpus > 1)
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  bench();
  return 0;
}

/* the exiting ranks set a flag on their way out */
void step(int rank, int err) {
  if (rank == 0 && err) {
    failed = 1;
    return;
  }
  MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
}

/* an error code through the cleanup label, after the last collective */
int check(int rank, int err) {
  int ret = 0;
  if (rank == 0 && err) {
    ret = -1;
    goto done;
  }
  ret = 1;
done:
  return ret;
}

/* nothing collective after the exit: the global it writes later is how callers see it */
void init(int rank, int err) {
  if (rank == 0 && err)
    return;
  nsteps = 4;
}

int main(int argc, char **argv) {
  int rank;
  struct args a;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  run(&a);
  step(rank, argc > 3);
  if (failed)
    return 1;
  MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  if (check(rank, argc > 4) < 0) /* check's negative result is its failure */
    return 1;
  MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}{{error-path}}
  init(rank, argc > 5);
  for (int i = 0; i < nsteps; i++)
    MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  MPI_Finalize();
  return 0;
}
