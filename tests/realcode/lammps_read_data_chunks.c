// lammps_read_data_chunks.c — reduced from lammps 20220106 src/read_data.cpp:1659-1726
// (ReadData::bodies): rank 0 reads a chunk of lines, MPI_Bcast shares the chunk's size, and
// every rank advances `nread` by that broadcast size, so the loop runs equally often on every
// rank. bench/RESULTS.md class F10 (a lammps finding that the flow-sensitive taint removes).
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define CHUNK 16

static void bodies(MPI_Comm world, FILE *fp, long natoms) {
  int me, nchunk = 0, m = 0, nmax;
  char buffer[CHUNK * 64];
  MPI_Comm_rank(world, &me);
  long nread = 0;
  while (nread < natoms) {
    if (natoms - nread > CHUNK)
      nmax = CHUNK;
    else
      nmax = (int)(natoms - nread);
    if (me == 0) {
      nchunk = 0;
      m = 0;
      while (nchunk < nmax && fgets(&buffer[m], 64, fp)) {
        m += (int)strlen(&buffer[m]);
        nchunk++;
      }
      m++;
    }
    MPI_Bcast(&nchunk, 1, MPI_INT, 0, world);
    MPI_Bcast(&m, 1, MPI_INT, 0, world);
    MPI_Bcast(buffer, m, MPI_CHAR, 0, world);
    nread += nchunk;
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  FILE *fp = fopen(argc > 1 ? argv[1] : "data.txt", "r");
  bodies(MPI_COMM_WORLD, fp, 100);
  if (fp)
    fclose(fp);
  MPI_Finalize();
  return 0;
}
