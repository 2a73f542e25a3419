// cdb_c.cu — a CUDA entry of the generated compilation database, with nvcc flags that lint
// must translate away; the rank-dependent loop below is its one finding (line 9).
#include <nccl.h>
__global__ void scale(float *x) { x[threadIdx.x] *= 2.0f; }
void steps(ncclComm_t comm, float *buf, cudaStream_t s) {
  int r = 0;
  ncclCommUserRank(comm, &r);
  for (int i = 0; i < r; i++)
    ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, s);
  scale<<<1, 32, 0, s>>>(buf);
}
