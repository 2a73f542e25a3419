/* prog_nccl.c — NCCL test program for the recorder's CPU tests, linked against the
 * stand-in libnccl.so.2 (a test double). One process is one rank: RANK and
 * WORLD_SIZE (or Open MPI's OMPI_COMM_WORLD_*) come from the environment (default 0 / 1); the unique id is derived
 * from LS_TEST_UID so ranks started separately share a communicator identity.
 *   prog_nccl basic | rc | threads [T N] | split | hang [SEC] | loop N [USEC]
 *   | idleburst IDLE_MS N [USEC] (one call, IDLE_MS idle, then loop N USEC)
 *             | hang2 | p2pfan | diverge op|count|dtype|redop|root|skip|extra | exec PROG ARGS...
 * Every scenario checks the return codes it expects and exits 1 on a surprise; `rc`
 * also prints "rc <label> <value>" lines so a test can diff runs with and without
 * liblockstep preloaded. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "standin_prog.h"



static int rank, world;
static int failures;

static void expect(const char *label, ncclResult_t got, ncclResult_t want) {
  if (got != want) {
    fprintf(stderr, "prog_nccl: %s returned %d, expected %d\n", label, (int)got, (int)want);
    failures++;
  }
}

static ncclUniqueId uid(const char *name) { return standin_uid("lockstep-test", name); }

static ncclComm_t init(const char *name) {
  ncclComm_t c = NULL;
  expect("ncclCommInitRank", ncclCommInitRank(&c, world, uid(name), rank), ncclSuccess);
  return c;
}

static float buf[64];

static void basic(void) {
  ncclComm_t c = init("world");
  expect("ncclAllReduce", ncclAllReduce(buf, buf, 8, F32, SUM, c, STREAM), ncclSuccess);
  expect("ncclBroadcast", ncclBroadcast(buf, buf, 4, F32, 0, c, STREAM), ncclSuccess);
  expect("ncclGroupStart", ncclGroupStart(), ncclSuccess);
  expect("ncclSend", ncclSend(buf, 2, F32, (rank + 1) % world, c, STREAM), ncclSuccess);
  expect("ncclRecv", ncclRecv(buf, 2, F32, (rank + world - 1) % world, c, STREAM), ncclSuccess);
  expect("ncclGroupEnd", ncclGroupEnd(), ncclSuccess);
  expect("ncclReduce", ncclReduce(buf, buf, 3, F32, SUM, 0, c, STREAM), ncclSuccess);
  expect("ncclAllGather", ncclAllGather(buf, buf, 1, F32, c, STREAM), ncclSuccess);
  expect("ncclReduceScatter", ncclReduceScatter(buf, buf, 1, F32, SUM, c, STREAM), ncclSuccess);
  expect("ncclAlltoAll", ncclAlltoAll(buf, buf, 1, F32, c, STREAM), ncclSuccess);
  expect("ncclGather", ncclGather(buf, buf, 1, F32, 0, c, STREAM), ncclSuccess);
  expect("ncclScatter", ncclScatter(buf, buf, 1, F32, 0, c, STREAM), ncclSuccess);
  expect("ncclBcast", ncclBcast(buf, 5, F32, 0, c, STREAM), ncclSuccess);
  ncclResult_t st = ncclNumResults;
  int n = -1, r = -1, d = -1;
  expect("ncclCommGetAsyncError", ncclCommGetAsyncError(c, &st), ncclSuccess);
  expect("async state", st, ncclSuccess);
  expect("ncclCommCount", ncclCommCount(c, &n), ncclSuccess);
  expect("ncclCommUserRank", ncclCommUserRank(c, &r), ncclSuccess);
  expect("ncclCommCuDevice", ncclCommCuDevice(c, &d), ncclSuccess);
  if (n != world || r != rank)
    failures++;
  expect("ncclCommFinalize", ncclCommFinalize(c), ncclSuccess);
  expect("ncclCommDestroy", ncclCommDestroy(c), ncclSuccess);
}

static ncclResult_t show(const char *label, ncclResult_t got, ncclResult_t want) {
  printf("rc %s %d\n", label, (int)got);
  expect(label, got, want);
  return got;
}

static void rc_classes(void) {
  ncclComm_t c = init("rc");
  /* depth 0 GroupEnd */
  show("groupend_depth0", ncclGroupEnd(), ncclInvalidUsage);
  /* invalid root inside a group: returned by the call and again by the outer end */
  show("group_start", ncclGroupStart(), ncclSuccess);
  show("bcast_bad_root_in_group", ncclBroadcast(buf, buf, 1, F32, world, c, STREAM), ncclInvalidArgument);
  show("group_end_stored_error", ncclGroupEnd(), ncclInvalidArgument);
  /* nested groups: only the outermost end launches */
  show("nest_start1", ncclGroupStart(), ncclSuccess);
  show("nest_allreduce", ncclAllReduce(buf, buf, 2, F32, SUM, c, STREAM), ncclSuccess);
  show("nest_start2", ncclGroupStart(), ncclSuccess);
  show("nest_send", ncclSend(buf, 1, F32, 0, c, STREAM), ncclSuccess);
  show("nest_end2", ncclGroupEnd(), ncclSuccess);
  show("nest_end1", ncclGroupEnd(), ncclSuccess);
  /* ungrouped argument errors */
  show("allreduce_bad_dtype", ncclAllReduce(buf, buf, 2, (ncclDataType_t)99, SUM, c, STREAM), ncclInvalidArgument);
  show("allreduce_null_comm", ncclAllReduce(buf, buf, 2, F32, SUM, NULL, STREAM), ncclInvalidArgument);
  show("count_null_out", ncclCommCount(c, NULL), ncclInvalidArgument);
  show("async_null_comm", ncclCommGetAsyncError(NULL, NULL), ncclInvalidArgument);
  show("init_bad_rank", ncclCommInitRank(&(ncclComm_t){0}, world, uid("bad"), world + 3), ncclInvalidArgument);
  /* split with no color */
  ncclComm_t none = (ncclComm_t)(uintptr_t)1;
  show("split_nocolor", ncclCommSplit(c, NCCL_SPLIT_NOCOLOR, rank, &none, NULL), ncclSuccess);
  if (none != NULL)
    failures++;
  /* simulate end */
  show("sim_start", ncclGroupStart(), ncclSuccess);
  show("sim_allreduce", ncclAllReduce(buf, buf, 2, F32, SUM, c, STREAM), ncclSuccess);
  show("sim_end", ncclGroupSimulateEnd(NULL), ncclSuccess);
  /* non-blocking communicator: in progress, then success via GetAsyncError */
  ncclConfig_t cfg = {sizeof(ncclConfig_t), 0, 0, 0};
  ncclComm_t nb = NULL;
  show("nb_init", ncclCommInitRankConfig(&nb, world, uid("nb"), rank, &cfg), ncclInProgress);
  ncclResult_t st = ncclInProgress;
  int npolls = 0;
  while (st == ncclInProgress && npolls < 100) {
    show("nb_poll", ncclCommGetAsyncError(nb, &st), ncclSuccess);
    npolls++;
  }
  show("nb_state", st, ncclSuccess);
  show("nb_allreduce", ncclAllReduce(buf, buf, 2, F32, SUM, nb, STREAM), ncclSuccess);
  show("nb_finalize", ncclCommFinalize(nb), ncclInProgress);
  st = ncclInProgress;
  while (st == ncclInProgress && npolls < 200) {
    ncclCommGetAsyncError(nb, &st);
    npolls++;
  }
  show("nb_destroy", ncclCommDestroy(nb), ncclSuccess);
  show("abort", ncclCommAbort(c), ncclSuccess);
}

static int nthreads = 4, niters = 200;
static long sleep_us; /* LS_TEST_SLEEP_US: pause per iteration, lets the watchdog poll */
static void *thread_main(void *arg) {
  char name[32];
  snprintf(name, sizeof name, "thread%ld", (long)(intptr_t)arg);
  ncclComm_t c = init(name);
  for (int i = 0; i < niters; i++) {
    if (sleep_us)
      usleep((useconds_t)sleep_us);
    if (i % 10 == 0) {
      ncclGroupStart();
      ncclSend(buf, (size_t)i, F32, 0, c, STREAM);
      ncclRecv(buf, (size_t)i, F32, 0, c, STREAM);
      expect("ncclGroupEnd", ncclGroupEnd(), ncclSuccess);
    } else {
      expect("ncclAllReduce", ncclAllReduce(buf, buf, (size_t)i, F32, SUM, c, STREAM), ncclSuccess);
    }
  }
  ncclCommDestroy(c);
  return NULL;
}

static void threads(void) {
  pthread_t t[64];
  if (nthreads > 64)
    nthreads = 64;
  for (long i = 0; i < nthreads; i++)
    pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i);
  for (int i = 0; i < nthreads; i++)
    pthread_join(t[i], NULL);
}

static void split(void) {
  ncclComm_t w = init("world"), a = NULL, b = NULL, s = NULL;
  expect("ncclCommSplit", ncclCommSplit(w, rank % 2, rank, &a, NULL), ncclSuccess);
  expect("ncclCommSplit", ncclCommSplit(w, rank % 2, -rank, &b, NULL), ncclSuccess);
  expect("ncclAllReduce", ncclAllReduce(buf, buf, 1, F32, SUM, w, STREAM), ncclSuccess);
  expect("ncclAllReduce", ncclAllReduce(buf, buf, 2, F32, SUM, a, STREAM), ncclSuccess);
  expect("ncclAllReduce", ncclAllReduce(buf, buf, 3, F32, SUM, b, STREAM), ncclSuccess);
  int excl[1] = {world - 1};
  if (world > 1) {
    expect("ncclCommShrink", ncclCommShrink(w, excl, 1, &s, NULL, 0), ncclSuccess);
    if (s)
      expect("ncclAllReduce", ncclAllReduce(buf, buf, 4, F32, SUM, s, STREAM), ncclSuccess);
  }
  ncclComm_t all[2];
  expect("ncclCommInitAll", ncclCommInitAll(all, 2, NULL), ncclSuccess);
  expect("ncclGroupStart", ncclGroupStart(), ncclSuccess);
  for (int i = 0; i < 2; i++)
    expect("ncclAllReduce", ncclAllReduce(buf, buf, 5, F32, SUM, all[i], STREAM), ncclSuccess);
  expect("ncclGroupEnd", ncclGroupEnd(), ncclSuccess);
}

static int hang(int secs) {
  ncclComm_t c = init("hang");
  expect("ncclAllReduce", ncclAllReduce(buf, buf, 8, F32, SUM, c, STREAM), ncclSuccess);
  usleep(200000);
  expect("ncclAllReduce", ncclAllReduce(buf, buf, 16, F32, SUM, c, STREAM), ncclSuccess);
  for (int i = 0; i < secs * 20; i++) {
    if (lsStandinAbortCount() > 0)
      return 3;
    usleep(50000);
  }
  return 0;
}

/* Two ranks that disagree at seq 1 (rank 1 deviates): op, count, dtype, root,
 * redop, peer, skip (rank 1 never issues seq 1), extra (rank 1 issues one more). */
static void diverge(const char *how) {
  ncclComm_t c = init("diverge");
  int odd = rank == 1;
  expect("seq0", ncclAllReduce(buf, buf, 8, F32, SUM, c, STREAM), ncclSuccess);
  if (!strcmp(how, "op") && odd)
    ncclBroadcast(buf, buf, 8, F32, 0, c, STREAM);
  else if (!strcmp(how, "count") && odd)
    ncclAllReduce(buf, buf, 9, F32, SUM, c, STREAM);
  else if (!strcmp(how, "dtype") && odd)
    ncclAllReduce(buf, buf, 8, (ncclDataType_t)2, SUM, c, STREAM);
  else if (!strcmp(how, "redop") && odd)
    ncclAllReduce(buf, buf, 8, F32, (ncclRedOp_t)2, c, STREAM);
  else if (!strcmp(how, "root"))
    ncclBroadcast(buf, buf, 8, F32, odd ? 1 : 0, c, STREAM);
  else if (!strcmp(how, "skip") && odd)
    ; /* rank 1 never issues seq 1 */
  else
    ncclAllReduce(buf, buf, 8, F32, SUM, c, STREAM);
  if (!strcmp(how, "extra") && odd)
    ncclAllReduce(buf, buf, 8, F32, SUM, c, STREAM);
  ncclCommDestroy(c);
}

/* Two hangs on two communicators, 1.5 s apart, two stuck calls on the first. */
static void hang2(void) {
  ncclComm_t a = init("hangA"), b = init("hangB");
  ncclAllReduce(buf, buf, 1, F32, SUM, a, STREAM);
  ncclAllReduce(buf, buf, 2, F32, SUM, a, STREAM);
  usleep(1500000);
  ncclAllReduce(buf, buf, 3, F32, SUM, b, STREAM);
  usleep(3000000);
}

/* Correct code whose send/recv counts differ per rank: rank 0 sends to every other
 * rank, each of them receives once; then the same collectives everywhere. */
static void p2pfan(void) {
  ncclComm_t c = init("fan");
  expect("ncclGroupStart", ncclGroupStart(), ncclSuccess);
  if (rank == 0)
    for (int p = 1; p < world; p++)
      ncclSend(buf, 4, F32, p, c, STREAM);
  else
    ncclRecv(buf, 4, F32, 0, c, STREAM);
  expect("ncclGroupEnd", ncclGroupEnd(), ncclSuccess);
  expect("ncclAllReduce", ncclAllReduce(buf, buf, 8, F32, SUM, c, STREAM), ncclSuccess);
  expect("ncclBroadcast", ncclBroadcast(buf, buf, 8, F32, 0, c, STREAM), ncclSuccess);
  ncclCommDestroy(c);
}

static void loop_on(ncclComm_t c, long n, long usec) {
  /* LS_TEST_DIVERGE_AT=K: rank 1's call K counts one more than the other ranks' */
  const char *dv = getenv("LS_TEST_DIVERGE_AT");
  long at = dv && *dv ? atol(dv) : -1;
  for (long i = 0; i < n; i++) {
    ncclAllReduce(buf, buf, (size_t)i + (i == at && rank == 1), F32, SUM, c, STREAM);
    if (usec)
      usleep((useconds_t)usec);
  }
}
static void loop(long n, long usec) { loop_on(init("loop"), n, usec); }

int main(int argc, char **argv) {
  standin_rank_world(&rank, &world);
  const char *sl = getenv("LS_TEST_SLEEP_US");
  sleep_us = sl ? atol(sl) : 0;
  const char *what = argc > 1 ? argv[1] : "basic";
  if (!strcmp(what, "basic"))
    basic();
  else if (!strcmp(what, "rc"))
    rc_classes();
  else if (!strcmp(what, "threads")) {
    if (argc > 3) {
      nthreads = atoi(argv[2]);
      niters = atoi(argv[3]);
    }
    threads();
  } else if (!strcmp(what, "split"))
    split();
  else if (!strcmp(what, "hang")) {
    int code = hang(argc > 2 ? atoi(argv[2]) : 5);
    return failures ? 1 : code;
  } else if (!strcmp(what, "p2pfan"))
    p2pfan();
  else if (!strcmp(what, "hang2"))
    hang2();
  else if (!strcmp(what, "diverge"))
    diverge(argc > 2 ? argv[2] : "op");
  else if (!strcmp(what, "exec") && argc > 2) { /* record one call, then become argv[2..] */
    ncclComm_t c = init("exec");
    ncclAllReduce(buf, buf, 1, F32, SUM, c, STREAM);
    execv(argv[2], argv + 2);
    perror("prog_nccl: execv");
    return 1;
  } else if (!strcmp(what, "idleburst")) { /* one call, IDLE_MS idle, then a loop */
    ncclComm_t c = init("idleburst");
    ncclAllReduce(buf, buf, 1, F32, SUM, c, STREAM);
    usleep((useconds_t)(argc > 2 ? atol(argv[2]) : 1000) * 1000);
    loop_on(c, argc > 3 ? atol(argv[3]) : 1000, argc > 4 ? atol(argv[4]) : 0);
  } else if (!strcmp(what, "loop"))
    loop(argc > 2 ? atol(argv[2]) : 1000, argc > 3 ? atol(argv[3]) : 0);
  else {
    fprintf(stderr, "prog_nccl: unknown scenario %s\n", what);
    return 2;
  }
  const char *linger = getenv("LS_TEST_LINGER_MS"); /* stay alive for the watchdog */
  if (linger)
    usleep((useconds_t)atol(linger) * 1000);
  return failures ? 1 : 0;
}
