// threads_many.c — the request table under concurrency and volume: two threads run
// non-blocking all-reduces on their own duplicated communicators at once
// (MPI_THREAD_MULTIPLE), then one MPI_Waitall completes more collective requests than
// the wait scratch holds inline. Every collective must end up completed.
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#define ITERS 200
#define MANY 100

static void *worker(void *arg) {
  MPI_Comm comm = *(MPI_Comm *)arg;
  int x = 1, y = 0, sum = 0;
  for (int i = 0; i < ITERS; i++) {
    MPI_Request r;
    MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    sum += y;
  }
  return (void *)(long)sum;
}

int main(int argc, char **argv) {
  int provided, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      printf("no MPI_THREAD_MULTIPLE\n");
    MPI_Finalize();
    return 3;
  }
  MPI_Comm comms[2];
  pthread_t th[2];
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
  for (int t = 0; t < 2; t++)
    pthread_create(&th[t], NULL, worker, &comms[t]);
  long total = 0;
  for (int t = 0; t < 2; t++) {
    void *v;
    pthread_join(th[t], &v);
    total += (long)v;
  }

  MPI_Request reqs[MANY];
  for (int i = 0; i < MANY; i++)
    MPI_Ibarrier(MPI_COMM_WORLD, &reqs[i]);
  MPI_Waitall(MANY, reqs, MPI_STATUSES_IGNORE);

  printf("rank %d: total %ld (expect %d)\n", rank, total, 2 * ITERS * size);
  MPI_Comm_free(&comms[1]);
  MPI_Comm_free(&comms[0]);
  MPI_Finalize();
  return total == 2 * ITERS * size ? 0 : 1;
}
