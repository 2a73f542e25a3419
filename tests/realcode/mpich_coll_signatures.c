// mpich_coll_signatures.c — reduced from mpich 4.0.2 test/mpi/coll/scatter2.c, scatter3.c,
// gather2.c and alltoallw_zeros.c: the two sides of a rank branch issue the same collective
// but describe the data differently, as MPI allows. What must match across ranks is the type
// signature, not the argument text: (1, a vector of n doubles) at the root against
// (n, MPI_DOUBLE) elsewhere, with or without MPI_IN_PLACE; the root-only arguments a non-root
// passes as NULL, -1, MPI_DATATYPE_NULL; the per-rank count, displacement and type arrays of
// MPI_Alltoallv and MPI_Allgatherv; a check loop on one side that issues nothing, inside the
// loop over roots that does. Quiet. Reported: a collective in that check loop, the same
// predefined type with another count on the two sides, another predefined type with the same
// count, a derived type beside another root, and another communicator.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, size, root, i, n = 12, stride = 10, errs = 0;
  int sendbuf = 0, recvbuf = 0, *sendcounts, *recvcounts, *sdispls, *rdispls, *cnt_a, *cnt_b, *dsp;
  double *vecin, *vecout;
  MPI_Datatype vec, sendtypes[1] = {MPI_INT}, recvtypes[1] = {MPI_INT};
  MPI_Comm dup;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  vecin = malloc((size_t)(n * stride * size) * sizeof *vecin);
  vecout = malloc((size_t)(n * stride * size) * sizeof *vecout);
  sendcounts = calloc((size_t)size, sizeof(int));
  recvcounts = calloc((size_t)size, sizeof(int));
  sdispls = calloc((size_t)size, sizeof(int));
  rdispls = calloc((size_t)size, sizeof(int));
  cnt_a = calloc((size_t)size, sizeof(int));
  cnt_b = calloc((size_t)size, sizeof(int));
  dsp = calloc((size_t)size, sizeof(int));
  MPI_Type_vector(n, 1, stride, MPI_DOUBLE, &vec);
  MPI_Type_commit(&vec);

  for (root = 0; root < size; root++) {
    /* scatter2.c: the root sends one vector to each rank, in place; the others receive n doubles */
    if (rank == root) {
      MPI_Scatter(vecin, 1, vec, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
    } else {
      MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, vecout, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
      /* the check: a loop that issues nothing, inside the loop over roots that does */
      for (i = 0; i < n; i++)
        if (vecout[i] != rank * ((n - 1) * stride + 1) + i * stride) {
          printf("[%d] Expected %d but found %f\n", rank, rank * ((n - 1) * stride + 1) + i * stride, vecout[i]);
          errs++;
        }
    }
    /* the same, but the check issues a collective the root never enters */
    if (rank == root) {
      MPI_Scatter(vecin, 1, vec, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
    } else {
      MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, vecout, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
      for (i = 0; i < n; i++)
        if (vecout[i] != i)
          MPI_Barrier(MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
    }
    /* scatter3.c: the root receives its part into a vector */
    if (rank == root)
      MPI_Scatter(vecin, n, MPI_DOUBLE, vecout, 1, vec, root, MPI_COMM_WORLD);
    else
      MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, vecout, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
    /* gather2.c: the root gathers n doubles from each, in place; the others send one vector */
    if (rank == root)
      MPI_Gather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, vecout, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
    else
      MPI_Gather(vecin, 1, vec, NULL, -1, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
  }

  /* alltoallw_zeros.c: in place, odd and even ranks name other (all-zero) count arrays and
   * another type element: per-rank arguments of a v-collective */
  if (rank % 2)
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, &recvbuf, recvcounts, rdispls, recvtypes[0],
                  MPI_COMM_WORLD);
  else
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, &recvbuf, sendcounts, sdispls, sendtypes[0],
                  MPI_COMM_WORLD);
  /* two arrays of one count per rank: what they hold is not in the text */
  if (rank == 0)
    MPI_Allgatherv(&sendbuf, 0, MPI_INT, &recvbuf, cnt_a, dsp, MPI_INT, MPI_COMM_WORLD);
  else
    MPI_Allgatherv(&sendbuf, 0, MPI_INT, &recvbuf, cnt_b, dsp, MPI_INT, MPI_COMM_WORLD);

  /* the same predefined type, another count: n doubles sent to each, n / 2 received */
  if (rank == 0)
    MPI_Scatter(vecin, n, MPI_DOUBLE, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  else
    MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, vecout, n / 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  /* the root gathers n doubles from each, the others send n - 1 */
  if (rank == 0)
    MPI_Gather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, vecout, n, MPI_DOUBLE, 0, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  else
    MPI_Gather(vecin, n - 1, MPI_DOUBLE, NULL, -1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
  /* another predefined type, the same count */
  if (rank == 0)
    MPI_Bcast(vecin, n, MPI_DOUBLE, 0, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  else
    MPI_Bcast(vecin, n, MPI_FLOAT, 0, MPI_COMM_WORLD);
  /* a derived type leaves the signature open, but the root must still agree */
  if (rank == 0)
    MPI_Scatter(vecin, 1, vec, vecout, 1, vec, 0, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  else
    MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, vecout, n, MPI_DOUBLE, size - 1, MPI_COMM_WORLD);
  /* and the communicator */
  if (rank == 0)
    MPI_Gather(vecin, 1, vec, vecout, n, MPI_DOUBLE, 0, MPI_COMM_WORLD); // expected-warning{{rank-divergent-collective}}
  else
    MPI_Gather(vecin, 1, vec, NULL, -1, MPI_DATATYPE_NULL, 0, dup);

  MPI_Type_free(&vec);
  MPI_Comm_free(&dup);
  free(vecin);
  free(vecout);
  free(sendcounts);
  free(recvcounts);
  free(sdispls);
  free(rdispls);
  free(cnt_a);
  free(cnt_b);
  free(dsp);
  MPI_Finalize();
  return errs != 0;
}
