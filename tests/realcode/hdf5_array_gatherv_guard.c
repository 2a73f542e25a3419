// hdf5_array_gatherv_guard.c — reduced from hdf5 1.10.8 src/H5Dmpio.c H5D__mpio_array_gatherv:
// the counts array is allocated and scaled under `allgather || rank == root`, filled by
// MPI_Allgather under `if (allgather)`, and read by MPI_Allgatherv under `if (allgather)`
// again. The writes depend on the rank by implicit flow, but where allgather (a parameter the
// function never writes) is true every rank took the condition and did the same writes:
// quiet. Reported: the read not guarded by allgather, the guard a rank value, the guard
// written in between, a conjunction `allgather && rank == root`, and per-rank values written.
#include <mpi.h>
#include <stdlib.h>

static void gatherv(const char *local, int n, size_t size, int allgather, int root, MPI_Comm comm) {
  int rank, nranks;
  int *counts = NULL, *displs = NULL;
  char *out = NULL;
  MPI_Comm_size(comm, &nranks);
  MPI_Comm_rank(comm, &rank);
  if (allgather || (rank == root)) {
    if (NULL == (out = malloc((size_t)n * size * (size_t)nranks)))
      goto done;
    if (NULL == (counts = (int *)malloc((size_t)nranks * sizeof(int))))
      goto done;
    if (NULL == (displs = (int *)malloc((size_t)nranks * sizeof(int))))
      goto done;
  }
  if (allgather) /* skipped by a rank whose malloc failed: an error path, as in hdf5 */
    MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, comm); // expected-warning{{rank-divergent-collective}}{{error-path}}
  else
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, root, comm);
  if (allgather || (rank == root)) {
    size_t i;
    for (i = 0; i < (size_t)nranks; i++)
      counts[i] = (int)((size_t)counts[i] * size);
    displs[0] = 0;
    for (i = 1; i < (size_t)nranks; i++)
      displs[i] = displs[i - 1] + counts[i - 1];
  }
  if (allgather)
    MPI_Allgatherv(local, n * (int)size, MPI_BYTE, out, counts, displs, MPI_BYTE, comm);
  else
    MPI_Gatherv(local, n * (int)size, MPI_BYTE, out, counts, displs, MPI_BYTE, root, comm);
done:
  free(counts);
  free(displs);
  free(out);
}

/* the same read on every path: where allgather is false only the root scaled its counts */
static void unguarded(const char *local, int n, size_t size, int allgather, int root, MPI_Comm comm) {
  int rank, nranks, *counts = NULL, displs[64];
  char out[4096];
  MPI_Comm_size(comm, &nranks);
  MPI_Comm_rank(comm, &rank);
  if (allgather || (rank == root))
    counts = (int *)malloc((size_t)nranks * sizeof(int));
  MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, comm);
  if (allgather || (rank == root))
    for (int i = 0; i < nranks; i++)
      counts[i] = (int)((size_t)counts[i] * size);
  for (int i = 0; i < nranks; i++)
    displs[i] = i * 64;
  MPI_Allgatherv(local, n * (int)size, MPI_BYTE, out, counts, displs, MPI_BYTE, comm); // expected-warning{{rank-dependent-argument}}
  free(counts);
}

/* the guard itself differs between ranks (the caller passes rank % 2) */
static void rank_guard(const char *local, int n, int allgather, int root, MPI_Comm comm) {
  int rank, nranks, counts[64], displs[64];
  char out[4096];
  MPI_Comm_size(comm, &nranks);
  MPI_Comm_rank(comm, &rank);
  MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, comm);
  if (allgather || (rank == root))
    for (int i = 0; i < nranks; i++)
      counts[i] = counts[i] * 2;
  for (int i = 0; i < nranks; i++)
    displs[i] = i * 64;
  if (allgather)
    MPI_Allgatherv(local, n, MPI_BYTE, out, counts, displs, MPI_BYTE, comm); // expected-warning{{rank-dependent-argument}} expected-warning{{rank-divergent-collective}}
}

/* the guard written between the writes and the read */
static void guard_changed(const char *local, int n, int allgather, int root, MPI_Comm comm) {
  int rank, nranks, counts[64], displs[64];
  char out[4096];
  MPI_Comm_size(comm, &nranks);
  MPI_Comm_rank(comm, &rank);
  MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, comm);
  if (allgather || (rank == root))
    for (int i = 0; i < nranks; i++)
      counts[i] = counts[i] * 2;
  for (int i = 0; i < nranks; i++)
    displs[i] = i * 64;
  allgather = !allgather;
  if (allgather)
    MPI_Allgatherv(local, n, MPI_BYTE, out, counts, displs, MPI_BYTE, comm); // expected-warning{{rank-dependent-argument}}
}

/* `allgather && rank == root`: allgather true does not make the condition hold everywhere */
static void conjunction(const char *local, int n, int allgather, int root, MPI_Comm comm) {
  int rank, nranks, counts[64], displs[64];
  char out[4096];
  MPI_Comm_size(comm, &nranks);
  MPI_Comm_rank(comm, &rank);
  MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, comm);
  if (allgather && (rank == root))
    for (int i = 0; i < nranks; i++)
      counts[i] = counts[i] * 2;
  for (int i = 0; i < nranks; i++)
    displs[i] = i * 64;
  if (allgather)
    MPI_Allgatherv(local, n, MPI_BYTE, out, counts, displs, MPI_BYTE, comm); // expected-warning{{rank-dependent-argument}}
  if (!allgather && (rank == root))
    for (int i = 0; i < nranks; i++)
      counts[i] = counts[i] * 2;
  if (!allgather)
    MPI_Allgatherv(local, n, MPI_BYTE, out, counts, displs, MPI_BYTE, comm); // expected-warning{{rank-dependent-argument}}
}

/* every rank writes under the guard, but its own rank into the counts */
static void per_rank_values(const char *local, int n, int allgather, int root, MPI_Comm comm) {
  int rank, nranks, counts[64], displs[64];
  char out[4096];
  MPI_Comm_size(comm, &nranks);
  MPI_Comm_rank(comm, &rank);
  MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, comm);
  if (allgather || (rank == root))
    for (int i = 0; i < nranks; i++)
      counts[i] = counts[i] * 2 + (i == rank);
  for (int i = 0; i < nranks; i++)
    displs[i] = i * 64;
  if (allgather)
    MPI_Allgatherv(local, n, MPI_BYTE, out, counts, displs, MPI_BYTE, comm); // expected-warning{{rank-dependent-argument}}
}

int main(int argc, char **argv) {
  int rank;
  char buf[64] = {0};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  gatherv(buf, 8, 1, 1, 0, MPI_COMM_WORLD);
  gatherv(buf, 8, 1, 0, 0, MPI_COMM_WORLD);
  unguarded(buf, 8, 1, 1, 0, MPI_COMM_WORLD);
  rank_guard(buf, 8, rank % 2, 0, MPI_COMM_WORLD);
  guard_changed(buf, 8, 1, 0, MPI_COMM_WORLD);
  conjunction(buf, 8, 1, 0, MPI_COMM_WORLD);
  per_rank_values(buf, 8, 1, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
