/* texture_fetch_functions.h — empty on purpose. CUDA 13 removed this header but clang 19's
 * CUDA wrapper still includes it; lockstep lint puts this folder on the include path. */
