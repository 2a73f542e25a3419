/* lockstep_cuda_prelude.h — force-included (-include) by `lockstep lint` for .cu files,
 * after clang's CUDA wrapper (which brings cuda_runtime.h, __device__ and uint4).
 * nvcc defines __CUDACC__ to a value and NCCL's device headers test `#if __CUDACC__`
 * (clang defines it empty); NCCL 2.28's GIN proxy header uses __stwt, which clang 19 lacks. */
#undef __CUDACC__
#define __CUDACC__ 1
__device__ void __stwt(uint4 *, uint4);
