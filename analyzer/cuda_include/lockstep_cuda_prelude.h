/* lockstep_cuda_prelude.h — force-included (-include) by `lockstep lint` for .cu files,
 * after clang's CUDA wrapper (which brings cuda_runtime.h, __device__ and uint4).
 * nvcc defines __CUDACC__ to a value and NCCL's device headers test `#if __CUDACC__`
 * (clang defines it empty); NCCL 2.28's GIN proxy header uses __stwt, which clang 19 lacks.
 * nvcc's crt/math_functions.hpp gives host code the integer and floating min/max overloads
 * (nccl-tests' `max(size_t, size_t)`); clang's wrapper declares them for the device only. */
#undef __CUDACC__
#define __CUDACC__ 1
__device__ void __stwt(uint4 *, uint4);
#ifdef __cplusplus
__host__ unsigned int min(unsigned int, unsigned int);
__host__ unsigned int min(int, unsigned int);
__host__ unsigned int min(unsigned int, int);
__host__ long min(long, long);
__host__ unsigned long min(unsigned long, unsigned long);
__host__ unsigned long min(long, unsigned long);
__host__ unsigned long min(unsigned long, long);
__host__ long long min(long long, long long);
__host__ unsigned long long min(unsigned long long, unsigned long long);
__host__ unsigned long long min(long long, unsigned long long);
__host__ unsigned long long min(unsigned long long, long long);
__host__ float min(float, float);
__host__ double min(double, double);
__host__ double min(float, double);
__host__ double min(double, float);
__host__ unsigned int max(unsigned int, unsigned int);
__host__ unsigned int max(int, unsigned int);
__host__ unsigned int max(unsigned int, int);
__host__ long max(long, long);
__host__ unsigned long max(unsigned long, unsigned long);
__host__ unsigned long max(long, unsigned long);
__host__ unsigned long max(unsigned long, long);
__host__ long long max(long long, long long);
__host__ unsigned long long max(unsigned long long, unsigned long long);
__host__ unsigned long long max(long long, unsigned long long);
__host__ unsigned long long max(unsigned long long, long long);
__host__ float max(float, float);
__host__ double max(double, double);
__host__ double max(float, double);
__host__ double max(double, float);
#endif
