// omp_regions.c — group-across-threads for OpenMP regions, linted with and without -fopenmp
// (tests/threads.cmake): a group closed inside the region that was opened before it, one
// opened in the region and closed after it, and clean shapes (balanced inside, `omp single`,
// a non-thread pragma). Not a runnable program.
#include <nccl.h>

void closes_in_region(ncclComm_t comm, cudaStream_t s, float *buf) {
  ncclGroupStart();
  ncclAllReduce(buf, buf, 8, ncclFloat, ncclSum, comm, s);
#pragma omp parallel num_threads(4)
  {
    ncclGroupEnd(); // expected-warning{{group-across-threads}}
  }
}

void opens_in_task(ncclComm_t comm, cudaStream_t s, float *buf) {
#pragma omp task
  {
    ncclGroupStart();
    ncclAllReduce(buf, buf, 8, ncclFloat, ncclSum, comm, s);
  }
  ncclGroupEnd(); // expected-warning{{group-across-threads}}
}

void balanced_per_thread(ncclComm_t *comms, cudaStream_t *s, float **buf, int n) {
#pragma omp parallel for \
    num_threads(2)
  for (int i = 0; i < n; i++) {
    ncclGroupStart();
    ncclAllReduce(buf[i], buf[i], 8, ncclFloat, ncclSum, comms[i], s[i]);
    ncclGroupEnd();
  }
}

void single_thread_group(ncclComm_t comm, cudaStream_t s, float *buf) {
#pragma omp parallel
  {
#pragma omp single
    {
      ncclGroupStart();
      ncclAllReduce(buf, buf, 8, ncclFloat, ncclSum, comm, s);
      ncclGroupEnd();
    }
  }
}

void not_a_region(ncclComm_t comm, cudaStream_t s, float *buf) {
  ncclGroupStart();
#pragma GCC ivdep
  for (int i = 0; i < 2; i++)
    ncclAllReduce(buf + i, buf + i, 8, ncclFloat, ncclSum, comm, s);
  ncclGroupEnd();
}

void primary_thread_group(ncclComm_t comm, cudaStream_t s, float *buf) {
  ncclGroupStart();
#pragma omp parallel
  {
#pragma omp master
    ncclAllReduce(buf, buf, 8, ncclFloat, ncclSum, comm, s);
#pragma omp masked
    {
      ncclGroupEnd(); /* the primary thread is the one that opened the group */
    }
  }
}

void single_is_any_thread(ncclComm_t comm, cudaStream_t s, float *buf) {
  ncclGroupStart();
  ncclAllReduce(buf, buf, 8, ncclFloat, ncclSum, comm, s);
#pragma omp parallel
  {
#pragma omp single
    ncclGroupEnd(); // expected-warning{{group-across-threads}}
  }
}

void comment_before_statement(ncclComm_t comm, cudaStream_t s, float *buf) {
#pragma omp parallel
  /* every thread of the team
   * opens a group here */
  ncclGroupStart();
  ncclAllReduce(buf, buf, 8, ncclFloat, ncclSum, comm, s);
  ncclGroupEnd(); // expected-warning{{group-across-threads}}
}

void comment_then_code(ncclComm_t comm, cudaStream_t s, float *buf) {
#pragma omp parallel
  /* one line */ ncclGroupStart();
  ncclAllReduce(buf, buf, 8, ncclFloat, ncclSum, comm, s);
  ncclGroupEnd(); // expected-warning{{group-across-threads}}
}

void own_group_after_region(ncclComm_t comm, cudaStream_t s, float *buf) {
#pragma omp parallel
  ncclGroupStart();
  ncclGroupStart(); /* the encountering thread's own, nested: closed by the next end */
  ncclAllReduce(buf, buf, 8, ncclFloat, ncclSum, comm, s);
  ncclGroupEnd();
  ncclGroupEnd(); // expected-warning{{group-across-threads}}
}
