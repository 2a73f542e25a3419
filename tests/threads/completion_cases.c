// completion_cases.c — completion-assumed-at-group-end edge cases (tests/threads.cmake):
// default-stream handles, blocking vs non-blocking creation, events recorded inside the group,
// events of unknown origin, helpers that wait, host writes, loops, rebinding. Not runnable.
#include <stddef.h>

#include <cuda_runtime.h>
#include <nccl.h>

static ncclComm_t comm;
static float host[8];

static void wait_all(void) { cudaDeviceSynchronize(); }

void per_thread_stream(float *buf, int n) {
  cudaStream_t s;
  cudaStreamCreate(&s);
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
  cudaMemcpyAsync(host, buf, sizeof host, cudaMemcpyDeviceToHost, cudaStreamPerThread); // expected-warning{{completion-assumed-at-group-end}}
  cudaStreamSynchronize(cudaStreamPerThread);
}

void legacy_stream_nonblocking(float *buf, int n) {
  cudaStream_t s = NULL;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
  cudaMemcpyAsync(host, buf + 4, sizeof host, cudaMemcpyDeviceToHost, 0); // expected-warning{{completion-assumed-at-group-end}}
}

void legacy_stream_blocking(float *buf, int n) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamDefault);
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
  cudaMemcpyAsync(host, buf, sizeof host, cudaMemcpyDeviceToHost, 0); /* the legacy stream waits for s */
  cudaMemcpy(host, &buf[2], sizeof host, cudaMemcpyDeviceToHost);
}

void event_inside_group(float *buf, int n) {
  cudaStream_t s;
  cudaEvent_t ev;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEventCreate(&ev);
  ncclGroupStart();
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
  cudaEventRecord(ev, s); /* captures nothing of the group yet */
  ncclGroupEnd();
  cudaEventSynchronize(ev);
  cudaMemcpy(host, buf, sizeof host, cudaMemcpyDeviceToHost); // expected-warning{{completion-assumed-at-group-end}}
}

void event_of_unknown_origin(float *buf, int n, cudaEvent_t ev) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
  cudaEventSynchronize(ev); /* recorded somewhere we cannot see: assumed to cover it */
  cudaMemcpy(host, buf, sizeof host, cudaMemcpyDeviceToHost);
}

void helper_waits(float *buf, int n) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
  wait_all();
  cudaMemcpy(host, buf, sizeof host, cudaMemcpyDeviceToHost);
}

void other_buffer_and_writes(float *buf, float *other, int n) {
  float *m;
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaMallocManaged((void **)&m, 64, cudaMemAttachGlobal);
  ncclAllReduce(buf, m, n, ncclFloat, ncclSum, comm, s);
  cudaMemcpy(host, other, sizeof host, cudaMemcpyDeviceToHost); /* not the receive buffer */
  m[0] = 1.0f;                                                   /* a write, not a read */
  host[0] = m[1]; // expected-warning{{completion-assumed-at-group-end}}
}

void loop_reads_previous_iteration(float *m, int n, int steps) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaMallocHost((void **)&m, 64);
  for (int i = 0; i < steps; i++) {
    host[i % 8] = *m; // expected-warning{{completion-assumed-at-group-end}}
    ncclAllReduce(m, m, n, ncclFloat, ncclSum, comm, s);
  }
}

void loop_synchronized(float *m, int n, int steps) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaHostAlloc((void **)&m, 64, cudaHostAllocMapped);
  for (int i = 0; i < steps; i++) {
    ncclAllReduce(m, m, n, ncclFloat, ncclSum, comm, s);
    cudaStreamSynchronize(s);
    host[i % 8] = *m;
  }
}

void stream_of_unknown_origin(float *buf, int n, cudaStream_t s) {
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
  cudaMemcpy(host, buf, sizeof host, cudaMemcpyDeviceToHost); /* s may be blocking: not reported */
}

void rebound(float *buf, float *fresh, int n) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
  buf = fresh;
  cudaMemcpy(host, buf, sizeof host, cudaMemcpyDeviceToHost);
}

void recv_in_group(float *buf, int n) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  ncclGroupStart();
  ncclRecv(buf, n, ncclFloat, 1, comm, s);
  cudaMemcpyAsync(host, buf, sizeof host, cudaMemcpyDeviceToHost, s); // expected-warning{{completion-assumed-at-group-end}}
  ncclGroupEnd();
  cudaStreamSynchronize(s);
}

void after_finalize(float *m, int n) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaMallocManaged((void **)&m, 64, cudaMemAttachGlobal);
  ncclAllReduce(m, m, n, ncclFloat, ncclSum, comm, s);
  ncclCommFinalize(comm); /* flushes the communicator's work */
  host[0] = m[0];
}

void event_recorded_before(float *buf, int n) {
  cudaStream_t s;
  cudaEvent_t ev;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEventCreate(&ev);
  cudaEventRecord(ev, s); /* before the collective: waiting for it waits for nothing of it */
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
  cudaEventSynchronize(ev);
  cudaMemcpy(host, buf, sizeof host, cudaMemcpyDeviceToHost); // expected-warning{{completion-assumed-at-group-end}}
}

void event_recorded_before_and_after(float *buf, int n) {
  cudaStream_t s;
  cudaEvent_t ev;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEventCreate(&ev);
  cudaEventRecord(ev, s);
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
  cudaEventRecord(ev, s);
  cudaEventSynchronize(ev);
  cudaMemcpy(host, buf, sizeof host, cudaMemcpyDeviceToHost);
}
