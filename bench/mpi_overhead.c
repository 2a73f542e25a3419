/* mpi_overhead.c — what liblockstep's PMPI layer adds per MPI_Allreduce (bench/
 * mpi_overhead.sh runs it plain and under `lockstep run`). In one run, batches through
 * MPI_Allreduce (interposed when preloaded) alternate with batches through
 * PMPI_Allreduce (never interposed): both see the same machine load, so their ratio
 * isolates the layer even on a busy, oversubscribed host. Cases: 8 bytes and 1 MiB on
 * MPI_COMM_WORLD, and 8 bytes on MPI_COMM_SELF (MPI itself does almost nothing there).
 * Per-call time = batch time / batch size; rank 0 prints medians over batches.
 * usage: mpi_overhead [SCALE] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof(double), cmp_double);
  return t[n / 2];
}

static double batch_ns(allreduce_fn f, const double *in, double *out, int n, MPI_Comm comm,
                       int batch) {
  PMPI_Barrier(MPI_COMM_WORLD); /* every batch starts together, unrecorded */
  double t0 = MPI_Wtime();
  for (int i = 0; i < batch; i++)
    f(in, out, n, MPI_DOUBLE, MPI_SUM, comm);
  return (MPI_Wtime() - t0) / batch * 1e9;
}

static void run_case(const char *name, MPI_Comm comm, size_t bytes, int batches, int batch,
                     int rank) {
  int n = (int)(bytes / sizeof(double));
  double *in = calloc((size_t)n, sizeof(double)), *out = calloc((size_t)n, sizeof(double));
  double *tw = calloc((size_t)batches, sizeof(double)), *tp = calloc((size_t)batches, sizeof(double));
  if (!in || !out || !tw || !tp)
    MPI_Abort(MPI_COMM_WORLD, 2);
  for (int i = 0; i < batch * 2; i++) { /* warm-up: connections, buffers, lazy lookups */
    MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm);
    PMPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm);
  }
  for (int b = 0; b < batches; b++) { /* alternate, and alternate which goes first */
    if (b % 2) {
      tw[b] = batch_ns(MPI_Allreduce, in, out, n, comm, batch);
      tp[b] = batch_ns(PMPI_Allreduce, in, out, n, comm, batch);
    } else {
      tp[b] = batch_ns(PMPI_Allreduce, in, out, n, comm, batch);
      tw[b] = batch_ns(MPI_Allreduce, in, out, n, comm, batch);
    }
  }
  double mw = median(tw, batches), mp = median(tp, batches);
  if (rank == 0)
    printf("case=%s bytes=%zu calls=%d mpi_ns=%.1f pmpi_ns=%.1f ratio=%.4f\n", name, bytes,
           batches * batch, mw, mp, mw / mp);
  free(tp);
  free(tw);
  free(out);
  free(in);
}

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int scale = argc > 1 ? atoi(argv[1]) : 10;
  if (scale < 1)
    scale = 1;
  run_case("world_8B", MPI_COMM_WORLD, 8, 20 * scale, 50, rank);
  run_case("world_1MiB", MPI_COMM_WORLD, 1 << 20, 10 * scale, 4, rank);
  run_case("self_8B", MPI_COMM_SELF, 8, 20 * scale, 1000, rank);
  MPI_Finalize();
  return 0;
}
