/* stress_nccl.c — "the runtime never changes the program's behavior", under
 * stress, against the stand-in libnccl.so.2 (a test double): many threads on several
 * communicators, fork after init, signal storms, exit with live communicators and
 * calls in flight, ncclCommAbort from another thread. Every thread checks each result
 * against the pattern the stand-in was told to produce, and at its end against the
 * stand-in's own hash of what it returned (lsStandinRcHash): a result changed on the
 * way back fails the run. LS_STRESS_LOG=FILE gets what was issued per communicator,
 * in issue order, for tests/runtime/stress_check.py to match with the trace.
 *   stress_nccl threads T C N [ordered] | fork K | forkinit | signals T N [hang]
 *             | exit CODE exit|return|thread | abort T N | wdabort
 * RANK / WORLD_SIZE as in prog_nccl.c; exit 1 on any surprise (message on stderr). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "standin_prog.h"


#define BADTYPE ((ncclDataType_t)99)

static int rank, world;
static int failures; /* atomic */
static long fail_mod, fail_rc;
static float buf[64];

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "stress_nccl: %s\n", msg);
  __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
}

/* The program's side of lsStandinRcHash: the same fold over the results it saw. */
static __thread unsigned long long tl_hash;
static ncclResult_t seen(ncclResult_t r) {
  tl_hash = tl_hash * 1000003ull + (unsigned long long)r + 1u;
  return r;
}
static void check_hash(const char *who) {
  if (tl_hash != lsStandinRcHash())
    failf("%s: results seen differ from results returned (hash %llx vs %llx)", who, tl_hash,
          lsStandinRcHash());
}

static void expect(const char *label, ncclResult_t got, ncclResult_t want) {
  if (got != want)
    failf("%s returned %d, expected %d", label, (int)got, (int)want);
}

static ncclUniqueId uid(const char *name) { return standin_uid("lockstep-stress", name); }

static ncclComm_t init(const char *name) {
  ncclComm_t c = NULL;
  expect("ncclCommInitRank", ncclCommInitRank(&c, world, uid(name), rank), ncclSuccess);
  return c;
}

/* What the stand-in returns for a collective of `count` elements (standin_nccl.c). */
static ncclResult_t want_rc(size_t count, ncclDataType_t t) {
  if (t == BADTYPE)
    return ncclInvalidArgument;
  if (fail_mod > 0 && count % (size_t)fail_mod == (size_t)fail_mod - 1)
    return (ncclResult_t)fail_rc;
  return ncclSuccess;
}

/* ---- a communicator shared by threads, and what was issued on it --------------- */

struct entry {
  const char *api;
  size_t count;
  int rc, thread;
};

struct scomm {
  ncclComm_t comm;
  int shared;  /* more than one thread: calls under `lock` */
  int ordered; /* members take turns (the same order on every rank) */
  int members;
  pthread_mutex_t lock;
  pthread_cond_t cv;
  long turn;
  struct entry *log; /* issue order == seq order: appended under the lock */
  size_t nlog, cap;
};

static void logcall(struct scomm *sc, const char *api, size_t count, ncclResult_t rc, int thread) {
  if (sc->nlog < sc->cap)
    sc->log[sc->nlog++] = (struct entry){api, count, (int)rc, thread};
}

/* One unit of work: a collective, or a group of calls (NCCL's group state is per
 * thread, so a group never interleaves with another thread's calls on the comm:
 * it is issued under the lock as a whole). Returns the sequenced calls issued. */
static int unit(struct scomm *sc, int t, long i) {
  ncclComm_t c = sc->comm;
  size_t n = (size_t)t * 1000000u + (size_t)i * 4u;
  int peer = (rank + 1) % world;
  ncclResult_t r, w = want_rc(n, F32), w1 = want_rc(n + 1, F32);
  switch ((i + t) % 10) {
  case 0:
    r = seen(ncclAllReduce(buf, buf, n, F32, SUM, c, STREAM));
    expect("ncclAllReduce", r, w);
    logcall(sc, "ncclAllReduce", n, r, t);
    return 1;
  case 1:
    r = seen(ncclBroadcast(buf, buf, n, F32, 0, c, STREAM));
    expect("ncclBroadcast", r, w);
    logcall(sc, "ncclBroadcast", n, r, t);
    return 1;
  case 2:
    r = seen(ncclReduce(buf, buf, n, F32, SUM, 0, c, STREAM));
    expect("ncclReduce", r, w);
    logcall(sc, "ncclReduce", n, r, t);
    return 1;
  case 3:
    r = seen(ncclAllGather(buf, buf, n, F32, c, STREAM));
    expect("ncclAllGather", r, w);
    logcall(sc, "ncclAllGather", n, r, t);
    return 1;
  case 4:
    r = seen(ncclReduceScatter(buf, buf, n, F32, SUM, c, STREAM));
    expect("ncclReduceScatter", r, w);
    logcall(sc, "ncclReduceScatter", n, r, t);
    return 1;
  case 5: { /* send/recv pair: the outer end returns the group's last error */
    expect("ncclGroupStart", seen(ncclGroupStart()), ncclSuccess);
    r = seen(ncclSend(buf, n, F32, peer, c, STREAM));
    expect("ncclSend", r, w);
    logcall(sc, "ncclSend", n, r, t);
    r = seen(ncclRecv(buf, n, F32, peer, c, STREAM)); /* a peer's send matches our recv */
    expect("ncclRecv", r, w);
    logcall(sc, "ncclRecv", n, r, t);
    expect("ncclGroupEnd", seen(ncclGroupEnd()), w);
    return 2;
  }
  case 6:
    r = seen(ncclAlltoAll(buf, buf, n, F32, c, STREAM));
    expect("ncclAlltoAll", r, w);
    logcall(sc, "ncclAlltoAll", n, r, t);
    return 1;
  case 7: { /* nested: only the outermost end returns the stored error */
    expect("ncclGroupStart", seen(ncclGroupStart()), ncclSuccess);
    r = seen(ncclAllReduce(buf, buf, n, F32, SUM, c, STREAM));
    expect("ncclAllReduce", r, w);
    logcall(sc, "ncclAllReduce", n, r, t);
    expect("ncclGroupStart", seen(ncclGroupStart()), ncclSuccess);
    r = seen(ncclAllReduce(buf, buf, n + 1, F32, SUM, c, STREAM));
    expect("ncclAllReduce", r, w1);
    logcall(sc, "ncclAllReduce", n + 1, r, t);
    expect("ncclGroupEnd", seen(ncclGroupEnd()), ncclSuccess);
    expect("ncclGroupEnd", seen(ncclGroupEnd()), w1 ? w1 : w);
    return 2;
  }
  case 8:
    r = seen(ncclBcast(buf, n, F32, 0, c, STREAM));
    expect("ncclBcast", r, w);
    logcall(sc, "ncclBcast", n, r, t);
    return 1;
  default: { /* now and then an argument error, when errors are asked for */
    ncclDataType_t dt = fail_mod > 0 && i % 50 == 9 ? BADTYPE : F32;
    r = seen(ncclAllReduce(buf, buf, n, dt, SUM, c, STREAM));
    expect("ncclAllReduce", r, want_rc(n, dt));
    logcall(sc, "ncclAllReduce", n, r, t);
    return 1;
  }
  }
}

static int unit_groups(int t, long i) { /* group start/end records of unit(t, i) */
  int k = (int)((i + t) % 10);
  return k == 5 ? 2 : k == 7 ? 4 : 0;
}

static void scomm_init(struct scomm *sc, const char *name, int members, int ordered, size_t cap) {
  memset(sc, 0, sizeof *sc);
  sc->comm = init(name);
  sc->members = members;
  sc->shared = members > 1;
  sc->ordered = ordered && members > 1;
  pthread_mutex_init(&sc->lock, NULL);
  pthread_cond_init(&sc->cv, NULL);
  sc->cap = cap;
  sc->log = calloc(cap ? cap : 1, sizeof *sc->log);
}

/* Issues unit i of thread t (member k of sc) with the comm's discipline. */
static int issue(struct scomm *sc, int t, int k, long i) {
  if (!sc->shared)
    return unit(sc, t, i);
  pthread_mutex_lock(&sc->lock);
  while (sc->ordered && sc->turn % sc->members != k)
    pthread_cond_wait(&sc->cv, &sc->lock);
  int n = unit(sc, t, i);
  sc->turn++;
  if (sc->ordered)
    pthread_cond_broadcast(&sc->cv);
  pthread_mutex_unlock(&sc->lock);
  return n;
}

static void write_log(struct scomm *comms, int ncomms, long records) {
  const char *path = getenv("LS_STRESS_LOG");
  if (!path)
    return;
  FILE *f = fopen(path, "w");
  if (!f) {
    failf("cannot write %s", path);
    return;
  }
  fprintf(f, "records %ld\n", records);
  for (int c = 0; c < ncomms; c++)
    for (size_t k = 0; k < comms[c].nlog; k++)
      fprintf(f, "call %d %zu %s %zu %d %d\n", c, k, comms[c].log[k].api, comms[c].log[k].count,
              comms[c].log[k].rc, comms[c].log[k].thread);
  /* A log cut short (a full disk) must fail the run, not reach stress_check.py. */
  int bad = ferror(f);
  if (fclose(f) != 0 || bad)
    failf("cannot write %s: %s", path, strerror(errno));
}

/* ---- threads T C N [ordered] ------------------------------------------------------ */

struct worker {
  pthread_t th;
  int t, k;
  long n;
  struct scomm *sc;
  long records; /* group start/end records it caused */
};

static void *worker_main(void *arg) {
  struct worker *w = arg;
  for (long i = 0; i < w->n; i++) {
    issue(w->sc, w->t, w->k, i);
    w->records += unit_groups(w->t, i);
  }
  check_hash("worker");
  return NULL;
}

/* Threads 0 .. C/2-1 own a communicator each; the others share the rest. */
static int comm_of(int t, int ncomms) {
  int own = ncomms / 2;
  return t < own ? t : own + (t - own) % (ncomms - own);
}

static void run_threads(int nthreads, int ncomms, long n, int ordered) {
  struct scomm *comms = calloc((size_t)ncomms, sizeof *comms);
  struct worker *ws = calloc((size_t)nthreads, sizeof *ws);
  for (int c = 0; c < ncomms; c++) {
    int members = 0;
    for (int t = 0; t < nthreads; t++)
      members += comm_of(t, ncomms) == c;
    char name[32];
    snprintf(name, sizeof name, "comm%d", c);
    scomm_init(&comms[c], name, members, ordered, (size_t)members * (size_t)n * 2);
  }
  for (int t = 0; t < nthreads; t++) {
    int c = comm_of(t, ncomms), k = 0;
    for (int u = 0; u < t; u++)
      k += comm_of(u, ncomms) == c;
    ws[t] = (struct worker){.t = t, .k = k, .n = n, .sc = &comms[c]};
    pthread_create(&ws[t].th, NULL, worker_main, &ws[t]);
  }
  long records = 2L * ncomms; /* init + destroy per communicator */
  for (int t = 0; t < nthreads; t++) {
    pthread_join(ws[t].th, NULL);
    records += ws[t].records;
  }
  for (int c = 0; c < ncomms; c++) {
    records += (long)comms[c].nlog;
    expect("ncclCommDestroy", ncclCommDestroy(comms[c].comm), ncclSuccess);
  }
  write_log(comms, ncomms, records);
  printf("threads %d comms %d records %ld\n", nthreads, ncomms, records);
  for (int c = 0; c < ncomms; c++)
    free(comms[c].log);
  free(comms);
  free(ws);
}

/* ---- fork K ---------------------------------------------------------------------- */

static int g_stop; /* atomic */

static void *busy_main(void *arg) { /* always inside the recorder somewhere */
  char name[32];
  snprintf(name, sizeof name, "busy%ld", (long)(intptr_t)arg);
  ncclComm_t c = init(name);
  for (long i = 0; !__atomic_load_n(&g_stop, __ATOMIC_ACQUIRE); i++) {
    expect("ncclAllReduce", seen(ncclAllReduce(buf, buf, (size_t)i, F32, SUM, c, STREAM)), ncclSuccess);
    if (i % 7 == 0) {
      seen(ncclGroupStart());
      seen(ncclSend(buf, 1, F32, 0, c, STREAM));
      seen(ncclRecv(buf, 1, F32, 0, c, STREAM));
      expect("ncclGroupEnd", seen(ncclGroupEnd()), ncclSuccess);
    }
  }
  check_hash("busy");
  return NULL;
}

static void *churn_main(void *arg) { /* registers communicators all the time */
  (void)arg;
  for (long i = 0; !__atomic_load_n(&g_stop, __ATOMIC_ACQUIRE) && i < 3000; i++) {
    char name[32];
    snprintf(name, sizeof name, "churn%ld", i);
    ncclComm_t c = init(name);
    expect("ncclCommDestroy", ncclCommDestroy(c), ncclSuccess);
    usleep(200);
  }
  return NULL;
}

/* A child that does not return within `secs` is deadlocked: SIGALRM ends it. */
static int wait_child(pid_t pid, const char *what, int k) {
  int st = 0;
  for (int waited = 0; waited < 3000; waited++) { /* 30 s, beyond the child's alarm */
    pid_t p = waitpid(pid, &st, WNOHANG);
    if (p == pid) {
      if (WIFSIGNALED(st)) {
        failf("%s %d killed by signal %d (SIGALRM: deadlocked)", what, k, WTERMSIG(st));
        return -1;
      }
      return WEXITSTATUS(st);
    }
    usleep(10000);
  }
  kill(pid, SIGKILL);
  failf("%s %d did not finish", what, k);
  return -1;
}

static void child_work(ncclComm_t parent, int k) {
  alarm(10);
  tl_hash = lsStandinRcHash(); /* what the forking thread saw before is inherited */
  for (int i = 0; i < 5; i++)
    expect("child ncclAllReduce", seen(ncclAllReduce(buf, buf, 100 + (size_t)i, F32, SUM, parent, STREAM)),
           ncclSuccess);
  char name[32];
  snprintf(name, sizeof name, "child%d", k);
  ncclComm_t c = init(name);
  for (int i = 0; i < 5; i++)
    expect("child ncclAllReduce", seen(ncclAllReduce(buf, buf, 200 + (size_t)i, F32, SUM, c, STREAM)),
           ncclSuccess);
  expect("ncclGroupStart", seen(ncclGroupStart()), ncclSuccess);
  seen(ncclSend(buf, 1, F32, 0, c, STREAM));
  seen(ncclRecv(buf, 1, F32, 0, c, STREAM));
  expect("ncclGroupEnd", seen(ncclGroupEnd()), ncclSuccess);
  check_hash("child");
}

static void run_fork(int nforks) {
  ncclComm_t parent = init("parent");
  pthread_t busy[3], churn;
  for (long i = 0; i < 3; i++)
    pthread_create(&busy[i], NULL, busy_main, (void *)(intptr_t)i);
  pthread_create(&churn, NULL, churn_main, NULL);
  usleep(20000);
  for (int k = 0; k < nforks; k++) {
    expect("ncclAllReduce", seen(ncclAllReduce(buf, buf, (size_t)k, F32, SUM, parent, STREAM)), ncclSuccess);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      child_work(parent, k);
      int code = failures ? 1 : 10 + k % 100;
      if (k % 2 == 0)
        _exit(code); /* no exit handlers: the trace has no clean-exit flag */
      exit(code);
    }
    if (pid < 0) {
      failf("fork failed: %s", strerror(errno));
      break;
    }
    int code = wait_child(pid, "child", k);
    if (code != 10 + k % 100)
      failf("child %d exited %d", k, code);
    /* the child continued the parent's numbering on `parent`: seq k+1 .. k+5 */
    printf("child %d pid %d exit %d first_seq %d\n", k, (int)pid, code, k + 1);
  }
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < 3; i++)
    pthread_join(busy[i], NULL);
  pthread_join(churn, NULL);
  check_hash("main");
}

/* forkinit: fork while another thread makes the process's first NCCL call (the
 * recorder initializing); the child's own first call must not deadlock. */
static pthread_barrier_t g_bar;
static void *first_call(void *arg) {
  (void)arg;
  pthread_barrier_wait(&g_bar);
  ncclUniqueId id;
  expect("ncclGetUniqueId", ncclGetUniqueId(&id), ncclSuccess);
  return NULL;
}

static void run_forkinit(void) {
  pthread_t t;
  pthread_barrier_init(&g_bar, NULL, 2);
  pthread_create(&t, NULL, first_call, NULL);
  pthread_barrier_wait(&g_bar);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(5);
    ncclComm_t c = init("forkinit-child");
    expect("child ncclAllReduce", ncclAllReduce(buf, buf, 1, F32, SUM, c, STREAM), ncclSuccess);
    _exit(failures ? 1 : 0);
  }
  pthread_join(t, NULL);
  if (pid > 0 && wait_child(pid, "child", 0) != 0)
    failf("forkinit child failed");
}

/* ---- signals T N [hang] ------------------------------------------------------------ */

static long g_alrm, g_usr1; /* atomic: handlers run on any thread */
static int g_devnull = -1;

static void on_alrm(int sig) { /* collective-free */
  (void)sig;
  __atomic_fetch_add(&g_alrm, 1, __ATOMIC_RELAXED);
}
static void on_usr1(int sig) { /* a syscall inside the handler */
  (void)sig;
  int e = errno;
  (void)!write(g_devnull, "x", 1);
  __atomic_fetch_add(&g_usr1, 1, __ATOMIC_RELAXED);
  errno = e;
}

struct sigworker {
  pthread_t th;
  int t;
  long n;
  struct scomm sc;
  int done; /* atomic: no more signals for it (it may be joined after that) */
};

static void *sigworker_main(void *arg) {
  struct sigworker *w = arg;
  char name[32];
  snprintf(name, sizeof name, "sig%d", w->t);
  scomm_init(&w->sc, name, 1, 0, (size_t)w->n * 2);
  for (long i = 0; i < w->n; i++)
    unit(&w->sc, w->t, i);
  check_hash("signal worker");
  __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

static struct sigworker *g_sw;
static int g_nsw;
static void *killer_main(void *arg) { /* SIGUSR1 at each worker in turn */
  (void)arg;
  for (long i = 0; !__atomic_load_n(&g_stop, __ATOMIC_ACQUIRE); i++) {
    if (!__atomic_load_n(&g_sw[i % g_nsw].done, __ATOMIC_ACQUIRE)) /* not joined yet */
      pthread_kill(g_sw[i % g_nsw].th, SIGUSR1);
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

static void run_signals(int nthreads, long n, int hang) {
  g_devnull = open("/dev/null", O_WRONLY);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alrm; /* no SA_RESTART: interrupted syscalls see EINTR */
  sigaction(SIGALRM, &sa, NULL);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  /* The storm starts before the first NCCL call: the recorder initializes under it. */
  struct itimerval it = {{0, 100}, {0, 100}};
  setitimer(ITIMER_REAL, &it, NULL);
  g_sw = calloc((size_t)nthreads, sizeof *g_sw);
  g_nsw = nthreads;
  for (int t = 0; t < nthreads; t++) {
    g_sw[t].t = t;
    g_sw[t].n = n;
    pthread_create(&g_sw[t].th, NULL, sigworker_main, &g_sw[t]);
  }
  pthread_t killer;
  pthread_create(&killer, NULL, killer_main, NULL);
  for (int t = 0; t < nthreads; t++) /* the killer uses their handles until they are done */
    while (!__atomic_load_n(&g_sw[t].done, __ATOMIC_ACQUIRE))
      usleep(1000);
  if (hang) { /* the watchdog fires while the storm goes on (LOCKSTEP_TIMEOUT < 2 s) */
    struct timespec ts = {2, 500000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
      ;
  }
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
  pthread_join(killer, NULL);
  long records = 0;
  for (int t = 0; t < nthreads; t++) {
    pthread_join(g_sw[t].th, NULL);
    records += 1 + (long)g_sw[t].sc.nlog; /* init */
    for (long i = 0; i < n; i++)
      records += unit_groups(t, i);
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  struct scomm *comms = calloc((size_t)nthreads, sizeof *comms);
  for (int t = 0; t < nthreads; t++)
    comms[t] = g_sw[t].sc;
  write_log(comms, nthreads, records);
  for (int t = 0; t < nthreads; t++)
    free(g_sw[t].sc.log);
  free(comms);
  free(g_sw);
  long na = __atomic_load_n(&g_alrm, __ATOMIC_RELAXED), nu = __atomic_load_n(&g_usr1, __ATOMIC_RELAXED);
  printf("signals alrm %ld usr1 %ld\n", na, nu);
  if (na < 100 || nu < 100)
    failf("only %ld SIGALRM and %ld SIGUSR1", na, nu);
}

/* ---- exit CODE exit|return|thread ---------------------------------------------------- */

static int g_started; /* atomic: forever_main threads past their first call */

static void *forever_main(void *arg) {
  struct scomm *sc = arg;
  for (long i = 0;; i++) {
    ncclResult_t r = ncclAllReduce(buf, buf, (size_t)i, F32, SUM, sc->comm, STREAM);
    if (r != ncclSuccess)
      failf("ncclAllReduce returned %d at %ld", (int)r, i);
    if (i == 0)
      __atomic_fetch_add(&g_started, 1, __ATOMIC_RELEASE);
  }
  return NULL;
}

static void *exiter_main(void *arg) {
  usleep(100000);
  exit((int)(intptr_t)arg);
}

static int run_exit(int code, const char *how) {
  static struct scomm comms[4];
  for (int c = 0; c < 4; c++) {
    char name[32];
    snprintf(name, sizeof name, "exit%d", c);
    comms[c].comm = init(name);
    pthread_t t;
    pthread_create(&t, NULL, forever_main, &comms[c]);
  }
  /* every communicator has calls before the exit, however loaded the machine */
  while (__atomic_load_n(&g_started, __ATOMIC_ACQUIRE) < 4)
    usleep(1000);
  if (!strcmp(how, "thread")) {
    pthread_t t;
    pthread_create(&t, NULL, exiter_main, (void *)(intptr_t)code);
    pthread_join(t, NULL); /* never returns: exit() in that thread ends the process */
  }
  usleep(100000);
  if (!strcmp(how, "exit"))
    exit(code);
  return code; /* return from main with the comms alive */
}

/* ---- abort T N: ncclCommAbort from another thread, without the comm's lock ------------ */

struct abworker {
  pthread_t th;
  int t;
  long n;
  struct scomm *sc;
};
static long g_issued; /* atomic */

static void *abworker_main(void *arg) {
  struct abworker *w = arg;
  int erred = 0;
  for (long i = 0; i < w->n; i++) {
    size_t n = (size_t)w->t * 1000000u + (size_t)i;
    pthread_mutex_lock(&w->sc->lock);
    ncclResult_t r = seen(ncclAllReduce(buf, buf, n, F32, SUM, w->sc->comm, STREAM));
    logcall(w->sc, "ncclAllReduce", n, r, w->t);
    pthread_mutex_unlock(&w->sc->lock);
    __atomic_fetch_add(&g_issued, 1, __ATOMIC_RELAXED);
    /* success until the abort, then errors only: invalid handle, or aborted in flight */
    if (r == ncclSuccess && erred)
      failf("ncclAllReduce: success at %ld after an error (thread %d)", i, w->t);
    else if (r != ncclSuccess && r != ncclInvalidArgument && r != ncclRemoteError)
      failf("ncclAllReduce returned %d (thread %d)", (int)r, w->t);
    erred |= r != ncclSuccess;
  }
  check_hash("abort worker");
  return NULL;
}

static void run_abort(int nthreads, long n) {
  struct scomm comms[2];
  scomm_init(&comms[0], "aborted", nthreads, 0, (size_t)nthreads * (size_t)n);
  scomm_init(&comms[1], "bystander", 1, 0, 64);
  struct abworker *ws = calloc((size_t)nthreads, sizeof *ws);
  for (int t = 0; t < nthreads; t++) {
    ws[t] = (struct abworker){.t = t, .n = n, .sc = &comms[0]};
    pthread_create(&ws[t].th, NULL, abworker_main, &ws[t]);
  }
  while (__atomic_load_n(&g_issued, __ATOMIC_RELAXED) < (long)nthreads * n / 2)
    usleep(100);
  /* PyTorch's watchdog does this: abort while other threads are in (or about to
   * enter) calls on the communicator, without their lock. */
  expect("ncclCommAbort", ncclCommAbort(comms[0].comm), ncclSuccess);
  for (int t = 0; t < nthreads; t++)
    pthread_join(ws[t].th, NULL);
  for (int i = 0; i < 8; i++) { /* another communicator is not affected */
    ncclResult_t r = ncclAllReduce(buf, buf, 5000000u + (size_t)i, F32, SUM, comms[1].comm, STREAM);
    expect("bystander ncclAllReduce", r, ncclSuccess);
    logcall(&comms[1], "ncclAllReduce", 5000000u + (size_t)i, r, nthreads);
  }
  long ok = 0, bad = 0;
  for (size_t k = 0; k < comms[0].nlog; k++)
    comms[0].log[k].rc ? bad++ : ok++;
  if (!ok || !bad)
    failf("expected successes and errors around the abort, got %ld and %ld", ok, bad);
  /* init x2, abort, calls */
  write_log(comms, 2, 3 + (long)comms[0].nlog + (long)comms[1].nlog);
  printf("abort ok %ld failed %ld\n", ok, bad);
  free(comms[0].log);
  free(comms[1].log);
  free(ws);
}

/* wdabort: the watchdog's policy abort (LOCKSTEP_POLICY=abort) on a hung
 * communicator while another thread keeps creating communicators. */
static int run_wdabort(void) {
  ncclComm_t c = init("wdhang");
  expect("ncclAllReduce", ncclAllReduce(buf, buf, 1, F32, SUM, c, STREAM), ncclSuccess);
  pthread_t churn;
  pthread_create(&churn, NULL, churn_main, NULL);
  for (int i = 0; i < 1000 && lsStandinAbortCount() == 0; i++)
    usleep(10000);
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
  pthread_join(churn, NULL);
  return lsStandinAbortCount() > 0 ? 3 : 0;
}

int main(int argc, char **argv) {
  standin_rank_world(&rank, &world);
  const char *fm = getenv("LS_STANDIN_FAIL_MOD"), *fr = getenv("LS_STANDIN_FAIL_RC");
  fail_mod = fm ? atol(fm) : 0;
  fail_rc = fr ? atol(fr) : 0;
  const char *what = argc > 1 ? argv[1] : "";
  int code = 0;
  if (!strcmp(what, "threads") && argc > 4)
    run_threads(atoi(argv[2]), atoi(argv[3]), atol(argv[4]), argc > 5 && !strcmp(argv[5], "ordered"));
  else if (!strcmp(what, "fork") && argc > 2)
    run_fork(atoi(argv[2]));
  else if (!strcmp(what, "forkinit"))
    run_forkinit();
  else if (!strcmp(what, "signals") && argc > 3)
    run_signals(atoi(argv[2]), atol(argv[3]), argc > 4 && !strcmp(argv[4], "hang"));
  else if (!strcmp(what, "exit") && argc > 3)
    return run_exit(atoi(argv[2]), argv[3]);
  else if (!strcmp(what, "abort") && argc > 3)
    run_abort(atoi(argv[2]), atol(argv[3]));
  else if (!strcmp(what, "wdabort"))
    code = run_wdabort();
  else {
    fprintf(stderr, "usage: stress_nccl threads T C N [ordered] | fork K | forkinit | signals T N [hang]"
                    " | exit CODE exit|return|thread | abort T N | wdabort\n");
    return 2;
  }
  return failures ? 1 : code;
}
