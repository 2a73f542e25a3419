// mpich_nonblocking3_prn.c — reduced from mpich 4.0.2 test/mpi/coll/nonblocking3.c:61-73,
// 160-171, 758-805: a pure PRNG drives which collective every rank posts next, from a seed
// all ranks share; one other call of it mixes in the rank (a jitter sleep). The summary of
// gen_prn says its return follows its parameter, so only that call's result is
// rank-dependent; before, it made every call's result rank-dependent and the switch a finding.
// Its twin mpich_nonblocking3_prn_rank.c keeps the calls that do get a rank value.
#include <mpi.h>
#include <unistd.h>

#define GEN_PRN_MAX (4294967291 - 1)
static unsigned int gen_prn(unsigned int x) { return (279470273UL * (unsigned long)x) % 4294967291UL; }
#define rand_range(rndval_, min_, max_) \
  ((unsigned int)((min_) + ((rndval_) * (1.0 / (GEN_PRN_MAX + 1.0)) * ((max_) - (min_)))))
/* a helper of the helper: its result follows what it passes on */
static unsigned int next_case(unsigned int seq, unsigned int n) { return rand_range(gen_prn(seq), 0, n); }

static void start_random_nonblocking(MPI_Comm comm, unsigned int rndnum, int *buf, MPI_Request *req) {
  switch (rand_range(rndnum, 0, 3)) {
  case 0:
    MPI_Ibcast(buf, 1, MPI_INT, 0, comm, req);
    break;
  case 1:
    MPI_Iallreduce(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, comm, req);
    break;
  default:
    MPI_Ibarrier(comm, req);
    break;
  }
}

int main(int argc, char **argv) {
  int wrank, buf = 0;
  unsigned int seed = 0x10bc, post_seq, complete_seq;
  MPI_Request req;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  post_seq = complete_seq = gen_prn(seed);
  for (int i = 0; i < 8; i++) {
    start_random_nonblocking(MPI_COMM_WORLD, post_seq, &buf, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    post_seq = gen_prn(post_seq);
    if (next_case(complete_seq, 2) == 1)
      MPI_Barrier(MPI_COMM_WORLD);
    complete_seq = gen_prn(complete_seq);
    if (0 == rand_range(gen_prn(complete_seq + wrank), 0, 4))
      usleep(10); /* jitter: only this call's result depends on the rank */
  }
  MPI_Finalize();
  return 0;
}

/* locals assigned outside any branch from the parameters, and a helper calling the PRNG */
static unsigned int mix(unsigned int a, unsigned int b) {
  unsigned int t = a * 31u;
  t ^= b;
  unsigned int u = gen_prn(t);
  return u + t;
}

int mixed_seeds(int rank) {
  unsigned int s = mix(3, (unsigned)rank), v = mix(5, 9);
  (void)s;
  if (v % 2)
    MPI_Barrier(MPI_COMM_WORLD);
  return 0;
}
