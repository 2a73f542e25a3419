// cuda_host_minmax.cu — host code calling min/max on size_t and double, as nccl-tests'
// startColl does: nvcc's headers declare these overloads for the host, clang's CUDA wrapper
// only for the device, so without lint's prelude the call is an error and the function is
// not checked (its finding lost).
#include <stddef.h>
#include <nccl.h>

void step(ncclComm_t comm, size_t a, size_t b, double x, double y, void *buf, cudaStream_t s) {
  int rank;
  ncclCommUserRank(comm, &rank);
  size_t n = max(a, b);
  double t = min(x, y);
  if (rank == 0 && t > 0)
    ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s); // expected-warning{{rank-divergent-collective}}
}
