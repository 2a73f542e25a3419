// rc_passthrough.c — MPI calls that fail and succeed, with MPI_ERRORS_RETURN, so the
// test can check that the PMPI wrappers hand back every return code and out-value
// unchanged: the same program prints the same lines with and without lockstep.
#include <mpi.h>
#include <stdio.h>

static void show(int rank, const char *what, int rc) {
  int cls = -1;
  if (rc != MPI_SUCCESS)
    MPI_Error_class(rc, &cls);
  printf("rank %d: %s rc=%s class=%d\n", rank, what, rc == MPI_SUCCESS ? "ok" : "error", cls);
}

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  int in[4] = {rank, rank + 1, rank + 2, rank + 3}, out[4] = {0, 0, 0, 0};
  show(rank, "Bcast root=size", MPI_Bcast(in, 1, MPI_INT, size, MPI_COMM_WORLD));
  show(rank, "Allreduce count=-1", MPI_Allreduce(in, out, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  show(rank, "Barrier COMM_NULL", MPI_Barrier(MPI_COMM_NULL));
  show(rank, "Allreduce", MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  printf("rank %d: sums %d %d %d %d\n", rank, out[0], out[1], out[2], out[3]);

  MPI_Request req = MPI_REQUEST_NULL;
  show(rank, "Iallreduce OP_NULL",
       MPI_Iallreduce(in, out, 4, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, &req));
  show(rank, "Wait REQUEST_NULL", MPI_Wait(&req, MPI_STATUS_IGNORE));
  int flag = 0;
  MPI_Ibcast(in, 4, MPI_INT, 0, MPI_COMM_WORLD, &req);
  show(rank, "Wait Ibcast", MPI_Wait(&req, MPI_STATUS_IGNORE));
  printf("rank %d: bcast %d %d, request null %d\n", rank, in[0], in[3], req == MPI_REQUEST_NULL);
  show(rank, "Test REQUEST_NULL", MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
  printf("rank %d: flag %d\n", rank, flag);

  MPI_Comm odd;
  show(rank, "Comm_split",
       MPI_Comm_split(MPI_COMM_WORLD, rank % 2 ? 1 : MPI_UNDEFINED, -rank, &odd));
  int orank = -1, osize = -1;
  if (odd != MPI_COMM_NULL) {
    MPI_Comm_rank(odd, &orank);
    MPI_Comm_size(odd, &osize);
    MPI_Comm_free(&odd);
  }
  printf("rank %d: odd comm %d/%d null-after-free %d\n", rank, orank, osize, odd == MPI_COMM_NULL);
  MPI_Finalize();
  return 0;
}
