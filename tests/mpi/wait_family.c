// wait_family.c — non-blocking collectives completed by each member of the wait family
// (Waitany, Waitsome, Testany, Testall, Testsome), mixed with point-to-point requests
// lockstep does not track. The test checks that every collective ends up completed.
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int a = rank, b = 0, c = 0, tok = rank, got = -1;
  MPI_Request r[3];
  int idx, n, idxs[3], flag = 0, done = 0;

  MPI_Iallreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
  MPI_Ibarrier(MPI_COMM_WORLD, &r[1]);
  for (int k = 0; k < 2; k++)
    MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE);

  MPI_Isend(&tok, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, &r[0]);
  MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 7, MPI_COMM_WORLD, &r[1]);
  MPI_Iallreduce(&a, &c, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r[2]);
  for (done = 0; done < 3; done += n)
    MPI_Waitsome(3, r, &n, idxs, MPI_STATUSES_IGNORE);

  MPI_Ibarrier(MPI_COMM_WORLD, &r[0]);
  for (flag = 0; !flag;)
    MPI_Testany(1, r, &idx, &flag, MPI_STATUS_IGNORE);

  MPI_Ibcast(&a, 1, MPI_INT, 0, MPI_COMM_WORLD, &r[0]);
  MPI_Ibarrier(MPI_COMM_WORLD, &r[1]);
  for (flag = 0; !flag;)
    MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);

  MPI_Iallgather(&rank, 1, MPI_INT, idxs, 1, MPI_INT, MPI_COMM_SELF, &r[0]);
  for (done = 0; done < 1; done += n)
    MPI_Testsome(1, r, &n, idxs, MPI_STATUSES_IGNORE);

  printf("rank %d: sum %d max %d got %d\n", rank, b, c, got);
  MPI_Finalize();
  return 0;
}
