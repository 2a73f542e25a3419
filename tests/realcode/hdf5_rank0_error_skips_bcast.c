// hdf5_rank0_error_skips_bcast.c — reduced from hdf5 1.10.8 src/H5FDmpio.c:1012-1027
// (H5FD__mpio_open): only rank 0 asks the file size, and its error path jumps past the
// MPI_Bcast that every other rank enters, so a rank-0 I/O error hangs the job instead of
// failing it. A real (error-path) finding of bench/realcode.sh; lint must keep reporting it, tagged
// (MPI_File_get_size is in no rules table: an MPI_ call's result is its error code).
#include <mpi.h>

int mpio_open(MPI_Comm comm, MPI_File fh, MPI_Offset *size_out) {
  int mpi_rank, mpi_code, ret_value = 0;
  MPI_Offset file_size = 0;

  if (MPI_SUCCESS != (mpi_code = MPI_Comm_rank(comm, &mpi_rank))) {
    ret_value = -1;
    goto done;
  }
  if (mpi_rank == 0) {
    if (MPI_SUCCESS != (mpi_code = MPI_File_get_size(fh, &file_size))) {
      ret_value = -1;
      goto done;
    }
  }
  if (MPI_SUCCESS != (mpi_code = MPI_Bcast(&file_size, (int)sizeof(MPI_Offset), MPI_BYTE, 0, comm))) // expected-warning{{rank-divergent-collective}}{{error-path}}
    ret_value = -1;
  *size_out = file_size;
done:
  return ret_value;
}
