/* tools_test.c — tests of `lockstep compare / trace export / confirm` on
 * hand-made traces. Each case writes trace files with trace_format.h directly
 * (no recorder involved), runs the lockstep binary and checks its exit code,
 * text and JSON. Call sites are real return addresses inside this program,
 * built with -g, so addr2line turns them into tools_test.c:LINE.
 * Usage: tools_test CASE LOCKSTEP WORKDIR */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace_format.h"

extern char **environ;

static const char *lockstep, *workdir;
static int failed;

#define CHECK(cond, ...)                                                                                            \
  do {                                                                                                              \
    if (!(cond)) {                                                                                                  \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                                      \
      fprintf(stderr, __VA_ARGS__);                                                                                 \
      fprintf(stderr, "\n");                                                                                        \
      failed = 1;                                                                                                   \
    }                                                                                                               \
  } while (0)

/* ---- call sites: return addresses on known lines of this file ------------ */

static __attribute__((noinline)) uint64_t here(void) { return (uint64_t)(uintptr_t)__builtin_return_address(0); }

enum { S_A, S_B, S_C, S_D, S_E, NSITES };
static uint64_t site_pc[NSITES];
static int site_line[NSITES];
#define CAPTURE(i)                                                                                                  \
  do {                                                                                                              \
    site_pc[i] = here();                                                                                            \
    site_line[i] = __LINE__;                                                                                        \
  } while (0)

static void capture_sites(void) {
  CAPTURE(S_A);
  CAPTURE(S_B);
  CAPTURE(S_C);
  CAPTURE(S_D);
  CAPTURE(S_E);
}

static struct ls_trace_module self_module;

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
      continue;
    uint64_t start = info->dlpi_addr + ph->p_vaddr;
    if (site_pc[0] >= start && site_pc[0] < start + ph->p_memsz) {
      self_module.base = info->dlpi_addr;
      self_module.start = start;
      self_module.end = start + ph->p_memsz;
      return 1;
    }
  }
  return 0;
}

static void find_self_module(void) {
  dl_iterate_phdr(phdr_cb, NULL);
  ssize_t n = readlink("/proc/self/exe", self_module.path, sizeof self_module.path - 1);
  if (n > 0)
    self_module.path[n] = 0;
}

/* ---- trace builder ----------------------------------------------------------- */

enum { A_ALLREDUCE, A_BROADCAST, A_BCAST, A_REDUCE, A_SEND, A_RECV, A_GSTART, A_GEND, A_ASYNC, A_INIT, A_DESTROY, NAPI };
static const struct {
  const char *name;
  unsigned kind;
} api_table[NAPI] = {
    {"ncclAllReduce", LS_KIND_COLLECTIVE}, {"ncclBroadcast", LS_KIND_COLLECTIVE}, {"ncclBcast", LS_KIND_COLLECTIVE},
    {"ncclReduce", LS_KIND_COLLECTIVE},    {"ncclSend", LS_KIND_P2P},             {"ncclRecv", LS_KIND_P2P},
    {"ncclGroupStart", LS_KIND_GROUP_START}, {"ncclGroupEnd", LS_KIND_GROUP_END},
    {"ncclCommGetAsyncError", LS_KIND_ASYNC_ERROR_QUERY}, {"ncclCommInitRank", LS_KIND_COMM_INIT},
    {"ncclCommDestroy", LS_KIND_COMM_DESTROY},
};

#define COMM 0xc0ffee11u
#define CAP 64
#define API_OFF LS_TRACE_HEADER_SIZE
#define MOD_OFF (API_OFF + 16 * sizeof(struct ls_trace_api))
#define REC_OFF (MOD_OFF + LS_TRACE_MAX_MODULES * sizeof(struct ls_trace_module))
#define FILE_SIZE (REC_OFF + CAP * LS_TRACE_RECORD_SIZE)

struct tb {
  struct ls_trace_header h;
  struct ls_trace_api apis[16];
  struct ls_trace_module mods[LS_TRACE_MAX_MODULES];
  struct ls_trace_record recs[CAP];
  int rank, size;
};

static struct tb *tb_new(int rank, int size) {
  struct tb *t = calloc(1, sizeof *t);
  memcpy(t->h.magic, LS_TRACE_MAGIC, 8);
  t->h.version = LS_TRACE_VERSION;
  t->h.header_size = LS_TRACE_HEADER_SIZE;
  t->h.record_size = LS_TRACE_RECORD_SIZE;
  t->h.flags = LS_TRACE_F_CLEAN_EXIT;
  t->h.capacity = CAP;
  t->h.api_offset = API_OFF;
  t->h.napis = NAPI;
  t->h.nmodules = 1;
  t->h.modules_offset = MOD_OFF;
  t->h.records_offset = REC_OFF;
  t->h.pid = 1000 + rank;
  t->h.launcher_rank = rank;
  t->h.launcher_size = size;
  t->h.timeout_ms = 5000;
  t->h.t0_realtime_ns = 1764470000000000000ull;
  t->h.t0_monotonic_ns = 1000000000ull + 777ull * rank; /* different clocks per rank */
  snprintf(t->h.hostname, sizeof t->h.hostname, "testhost");
  snprintf(t->h.exe, sizeof t->h.exe, "%s", self_module.path);
  for (int i = 0; i < NAPI; i++) {
    snprintf(t->apis[i].name, sizeof t->apis[i].name, "%s", api_table[i].name);
    t->apis[i].kind = (uint16_t)api_table[i].kind;
    t->apis[i].family = LS_FAMILY_NCCL;
  }
  t->mods[0] = self_module;
  t->rank = rank;
  t->size = size;
  return t;
}

/* Appends a returned, completed call; callers adjust fields afterwards. */
static struct ls_trace_record *rec(struct tb *t, int api, uint64_t seq, int site) {
  struct ls_trace_record *r = &t->recs[t->h.nrecords++];
  memset(r, 0, sizeof *r);
  r->state = LS_REC_RETURNED;
  r->api = (uint16_t)api;
  r->seq = seq;
  r->comm_id = seq == LS_NO_SEQ ? 0 : COMM;
  r->comm_rank = seq == LS_NO_SEQ ? -1 : t->rank;
  r->comm_size = seq == LS_NO_SEQ ? 0 : t->size;
  r->dtype = r->redop = r->root_or_peer = LS_NO_VALUE;
  r->tid = 4242;
  r->t_enter_ns = t->h.t0_monotonic_ns + 1000000ull * t->h.nrecords;
  r->t_exit_ns = r->t_enter_ns + 20000;
  r->t_complete_ns = r->t_enter_ns + 300000;
  r->flags = LS_REC_EVENT_RECORDED | LS_REC_COMPLETED;
  r->site_pc = site_pc[site];
  return r;
}

static struct ls_trace_record *coll(struct tb *t, int api, uint64_t seq, uint64_t count, int dtype, int redop,
                                    int root, int site) {
  struct ls_trace_record *r = rec(t, api, seq, site);
  r->count = count;
  r->dtype = dtype;
  r->redop = redop;
  r->root_or_peer = root;
  return r;
}

static struct ls_trace_record *ar(struct tb *t, uint64_t seq, int site) {
  return coll(t, A_ALLREDUCE, seq, 4, 7, 0, LS_NO_VALUE, site);
}
static struct ls_trace_record *bc(struct tb *t, int api, uint64_t seq, int root, int site) {
  return coll(t, api, seq, 4, 7, LS_NO_VALUE, root, site);
}
static struct ls_trace_record *p2p(struct tb *t, int api, uint64_t seq, int peer, uint64_t count, int site) {
  struct ls_trace_record *r = coll(t, api, seq, count, 7, LS_NO_VALUE, peer, site);
  r->flags |= LS_REC_IN_GROUP;
  return r;
}
static struct ls_trace_record *group(struct tb *t, int api, int depth) {
  struct ls_trace_record *r = rec(t, api, LS_NO_SEQ, S_E);
  r->group_depth = depth;
  r->flags = 0;
  return r;
}

static void mkdirs(const char *p) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", p);
  for (char *s = buf + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      mkdir(buf, 0755);
      *s = '/';
    }
  mkdir(buf, 0755);
}

static char *case_dir(const char *name) {
  static char buf[4096];
  snprintf(buf, sizeof buf, "%s/%s", workdir, name);
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", buf);
  if (system(cmd) != 0)
    fprintf(stderr, "warning: could not clear %s\n", buf);
  mkdirs(buf);
  return buf;
}

static void write_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n) {
    fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
    exit(2);
  }
  fclose(f);
}

/* Serializes t into a buffer of FILE_SIZE bytes (caller frees). */
static unsigned char *tb_bytes(const struct tb *t) {
  unsigned char *b = calloc(1, FILE_SIZE);
  memcpy(b, &t->h, sizeof t->h);
  memcpy(b + API_OFF, t->apis, sizeof t->apis);
  memcpy(b + MOD_OFF, t->mods, sizeof t->mods);
  memcpy(b + REC_OFF, t->recs, sizeof t->recs);
  return b;
}

/* The same trace in format version 1 (128-byte records without callers), as the
 * recorders of before version 2 wrote them. */
static void tb_write_v1(struct tb *t, const char *dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/rank%d.lstrace", dir, t->rank);
  size_t size = REC_OFF + CAP * LS_TRACE_RECORD_SIZE_V1;
  unsigned char *b = calloc(1, size);
  t->h.version = 1;
  t->h.record_size = LS_TRACE_RECORD_SIZE_V1;
  memcpy(b, &t->h, sizeof t->h);
  memcpy(b + API_OFF, t->apis, sizeof t->apis);
  memcpy(b + MOD_OFF, t->mods, sizeof t->mods);
  for (int i = 0; i < CAP; i++)
    memcpy(b + REC_OFF + (size_t)i * LS_TRACE_RECORD_SIZE_V1, &t->recs[i], LS_TRACE_RECORD_SIZE_V1);
  write_bytes(path, b, size);
  free(b);
  free(t);
}

static const char *tb_prefix = "rank"; /* file names: PREFIX<rank>.lstrace */

static void tb_write(struct tb *t, const char *dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s%d.lstrace", dir, tb_prefix, t->rank);
  unsigned char *b = tb_bytes(t);
  write_bytes(path, b, FILE_SIZE);
  free(b);
  free(t);
}

/* ---- running lockstep ---------------------------------------------------------- */

static char out_buf[1 << 20], err_buf[1 << 16];

static void slurp(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(buf, 1, len - 1, f) : 0;
  buf[n] = 0;
  if (f)
    fclose(f);
}

/* Runs lockstep with args (NULL-terminated); stdout/stderr into out_buf/err_buf. */
static int run(const char *first, ...) {
  char *argv[32];
  int n = 0;
  argv[n++] = (char *)lockstep;
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a && n < 31; a = va_arg(ap, const char *))
    argv[n++] = (char *)a;
  va_end(ap);
  argv[n] = NULL;
  char out[4200], err[4200];
  snprintf(out, sizeof out, "%s/stdout.txt", workdir);
  snprintf(err, sizeof err, "%s/stderr.txt", workdir);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  if (posix_spawn(&pid, lockstep, &fa, NULL, argv, environ) != 0) {
    fprintf(stderr, "cannot run %s\n", lockstep);
    exit(2);
  }
  posix_spawn_file_actions_destroy(&fa);
  int st;
  waitpid(pid, &st, 0);
  slurp(out, out_buf, sizeof out_buf);
  slurp(err, err_buf, sizeof err_buf);
  if (!WIFEXITED(st)) {
    fprintf(stderr, "lockstep died (status 0x%x)\nstderr: %s\n", st, err_buf);
    failed = 1;
    return -1;
  }
  return WEXITSTATUS(st);
}

static cJSON *parse_out(void) {
  cJSON *doc = cJSON_Parse(out_buf);
  CHECK(doc != NULL, "output is not JSON:\n%s", out_buf);
  return doc;
}

static int json_int(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valueint : -1;
}

static const char *json_str(const cJSON *o, const char *k) {
  return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* compare DIR must report `cls` first, at seq (or no seq when seq < 0), on
 * ranks r0[,r1]; text and JSON must agree, and the sites must name this file. */
static void expect_first(const char *dir, const char *cls, long seq, int r0, int r1) {
  int rc = run("compare", "--format=json", dir, NULL);
  CHECK(rc == 1, "compare exit %d, want 1; stderr: %s", rc, err_buf);
  cJSON *doc = parse_out();
  if (!doc)
    return;
  CHECK(!strcmp(json_str(doc, "status") ? json_str(doc, "status") : "", "divergent"), "status");
  const cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "divergences"), 0);
  CHECK(d != NULL, "no divergence in\n%s", out_buf);
  if (d) {
    const char *got = json_str(d, "class");
    CHECK(got && !strcmp(got, cls), "first class %s, want %s\n%s", got ? got : "(none)", cls, out_buf);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(d, "seq");
    if (seq >= 0)
      CHECK(cJSON_IsNumber(s) && (long)s->valuedouble == seq, "seq want %ld\n%s", seq, out_buf);
    else
      CHECK(cJSON_IsNull(s), "seq should be null\n%s", out_buf);
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(d, "ranks");
    CHECK(cJSON_GetArraySize(ranks) == (r1 < 0 ? 1 : 2), "ranks size\n%s", out_buf);
    CHECK(json_int(cJSON_GetArrayItem(ranks, 0), "") == -1 && cJSON_GetArrayItem(ranks, 0)->valueint == r0,
          "ranks[0] want %d\n%s", r0, out_buf);
    if (r1 >= 0)
      CHECK(cJSON_GetArrayItem(ranks, 1)->valueint == r1, "ranks[1] want %d\n%s", r1, out_buf);
    const cJSON *site = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(d, "sites"), 0);
    const char *file = site ? json_str(site, "file") : NULL;
    CHECK(file && strstr(file, "tools_test.c"), "first site should be in tools_test.c\n%s", out_buf);
    CHECK(json_str(d, "detail") != NULL, "detail");
  }
  cJSON_Delete(doc);
  rc = run("compare", dir, NULL);
  CHECK(rc == 1, "text compare exit %d", rc);
  char want[128];
  snprintf(want, sizeof want, "divergence: %s", cls);
  CHECK(!strncmp(out_buf, want, strlen(want)), "text should start with '%s':\n%s", want, out_buf);
  if (seq >= 0) {
    snprintf(want, sizeof want, "at seq %ld:", seq);
    CHECK(strstr(out_buf, want) != NULL, "text lacks '%s':\n%s", want, out_buf);
  }
  snprintf(want, sizeof want, "rank %d ", r0);
  CHECK(strstr(out_buf, want) != NULL, "text lacks '%s':\n%s", want, out_buf);
  CHECK(strstr(out_buf, "tools_test.c:") != NULL, "text lacks a file:line site:\n%s", out_buf);
}

/* ---- scenarios ------------------------------------------------------------------ */

/* A correct two-rank run: Bcast on one rank and Broadcast on the other are the
 * same protocol; a grouped ring exchange pairs each send with the peer's recv. */
static void write_consistent(const char *dir) {
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    rec(t, A_INIT, LS_NO_SEQ, S_A);
    ar(t, 0, S_A);
    bc(t, rk ? A_BROADCAST : A_BCAST, 1, 0, S_B);
    group(t, A_GSTART, 0);
    p2p(t, A_SEND, 2, 1 - rk, 16, S_C);
    p2p(t, A_RECV, 3, 1 - rk, 16, S_C);
    group(t, A_GEND, 1)->flags = LS_REC_OUTER_GROUP_END;
    ar(t, 4, S_D);
    rec(t, A_DESTROY, LS_NO_SEQ, S_E);
    tb_write(t, dir);
  }
}

static void case_consistent(void) {
  char *dir = case_dir("consistent");
  write_consistent(dir);
  int rc = run("compare", "--format=json", dir, NULL);
  CHECK(rc == 0, "exit %d, want 0\n%s%s", rc, out_buf, err_buf);
  cJSON *doc = parse_out();
  if (doc) {
    CHECK(!strcmp(json_str(doc, "status"), "consistent"), "status");
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "divergences")) == 0, "divergences");
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "communicators"), 0);
    CHECK(c && json_int(c, "size") == 2 && json_int(c, "calls") == 5, "communicator\n%s", out_buf);
    CHECK(c && !strcmp(json_str(c, "id"), "0xc0ffee11"), "comm id\n%s", out_buf);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "files")) == 2, "files");
    cJSON_Delete(doc);
  }
  rc = run("compare", dir, NULL);
  CHECK(rc == 0 && strstr(out_buf, "lockstep: consistent"), "text:\n%s", out_buf);

  /* Traces of format version 1 still read, beside version 2 ones; a divergence in
   * them is found with its sites. */
  dir = case_dir("version1");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    if (rk)
      bc(t, A_BROADCAST, 1, 0, S_C);
    else
      ar(t, 1, S_B);
    if (rk)
      tb_write_v1(t, dir);
    else
      tb_write(t, dir);
  }
  rc = run("compare", dir, NULL);
  char want1[64];
  snprintf(want1, sizeof want1, "tools_test.c:%d", site_line[S_C]);
  CHECK(rc == 1 && strstr(out_buf, "divergence: op-mismatch") && strstr(out_buf, want1), "version 1: %d\n%s%s", rc,
        out_buf, err_buf);

  /* Three ranks, a send 0->1 that rank 2 takes no part in, then an allreduce
   * that rank 2 numbers seq 0 and the others seq 1. */
  dir = case_dir("consistent3");
  for (int rk = 0; rk < 3; rk++) {
    struct tb *t = tb_new(rk, 3);
    uint64_t s = 0;
    if (rk == 0)
      p2p(t, A_SEND, s++, 1, 8, S_A);
    if (rk == 1)
      p2p(t, A_RECV, s++, 0, 8, S_A);
    ar(t, s, S_B);
    tb_write(t, dir);
  }
  rc = run("compare", dir, NULL);
  CHECK(rc == 0, "three-rank p2p: exit %d\n%s%s", rc, out_buf, err_buf);
}

/* Rank 1's call at seq `at` is changed by `mutate`. */
static void two_ranks(const char *name, void (*mutate)(struct ls_trace_record *r), int at) {
  char *dir = case_dir(name);
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    struct ls_trace_record *r = bc(t, A_BROADCAST, 1, 0, S_B);
    ar(t, 2, S_C);
    if (rk == 1)
      mutate(&t->recs[at]);
    (void)r;
    tb_write(t, dir);
  }
}

static void m_op(struct ls_trace_record *r) {
  r->api = A_ALLREDUCE;
  r->redop = 0;
  r->root_or_peer = LS_NO_VALUE;
  r->site_pc = site_pc[S_D];
}
static void m_count(struct ls_trace_record *r) { r->count = 8; }
static void m_dtype(struct ls_trace_record *r) { r->dtype = 8; }
static void m_root(struct ls_trace_record *r) { r->root_or_peer = 1; }
static void m_redop(struct ls_trace_record *r) { r->redop = 2; }

static void case_mismatches(void) {
  char dir[4200];
  two_ranks("op-mismatch", m_op, 1);
  snprintf(dir, sizeof dir, "%s/op-mismatch", workdir);
  expect_first(dir, "op-mismatch", 1, 0, 1);
  CHECK(strstr(out_buf, "ncclBroadcast(count=4, dtype=ncclFloat32, root=0)") &&
            strstr(out_buf, "ncclAllReduce(count=4, dtype=ncclFloat32, redop=ncclSum)"),
        "text should show both calls by name:\n%s", out_buf);
  char want[64];
  snprintf(want, sizeof want, "tools_test.c:%d", site_line[S_B]);
  CHECK(strstr(out_buf, want) != NULL, "rank 0's site %s missing:\n%s", want, out_buf);
  snprintf(want, sizeof want, "tools_test.c:%d", site_line[S_D]);
  CHECK(strstr(out_buf, want) != NULL, "rank 1's site %s missing:\n%s", want, out_buf);

  two_ranks("count-mismatch", m_count, 0);
  snprintf(dir, sizeof dir, "%s/count-mismatch", workdir);
  expect_first(dir, "count-mismatch", 0, 0, 1);
  two_ranks("dtype-mismatch", m_dtype, 2);
  snprintf(dir, sizeof dir, "%s/dtype-mismatch", workdir);
  expect_first(dir, "dtype-mismatch", 2, 0, 1);
  two_ranks("root-mismatch", m_root, 1);
  snprintf(dir, sizeof dir, "%s/root-mismatch", workdir);
  expect_first(dir, "root-mismatch", 1, 0, 1);
  two_ranks("redop-mismatch", m_redop, 2);
  snprintf(dir, sizeof dir, "%s/redop-mismatch", workdir);
  expect_first(dir, "redop-mismatch", 2, 0, 1);
}

static void case_p2p(void) {
  /* Rank 0 sends to 1, but rank 1 receives from 2 (and 2 sends to 1). */
  char *dir = case_dir("peer-mismatch");
  for (int rk = 0; rk < 3; rk++) {
    struct tb *t = tb_new(rk, 3);
    ar(t, 0, S_A);
    if (rk == 0)
      p2p(t, A_SEND, 1, 1, 8, S_B);
    if (rk == 1)
      p2p(t, A_RECV, 1, 2, 8, S_C);
    if (rk == 2)
      p2p(t, A_SEND, 1, 1, 8, S_C);
    tb_write(t, dir);
  }
  expect_first(dir, "peer-mismatch", 1, 0, 1);

  /* Rank 0 sends to 1 while rank 1 does an allreduce. */
  dir = case_dir("p2p-vs-collective");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    if (rk == 0)
      p2p(t, A_SEND, 1, 1, 8, S_B);
    else
      ar(t, 1, S_B);
    tb_write(t, dir);
  }
  expect_first(dir, "op-mismatch", 1, 0, 1);

  /* Send 8 elements, receive 16. */
  dir = case_dir("p2p-count");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    p2p(t, rk ? A_RECV : A_SEND, 0, 1 - rk, rk ? 16 : 8, S_A);
    tb_write(t, dir);
  }
  expect_first(dir, "count-mismatch", 0, 0, 1);
}

static void case_skip(void) {
  /* Rank 1 returns early and exits cleanly; rank 0 issues seq 1, which times out. */
  char *dir = case_dir("skip");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    if (rk == 0) {
      struct ls_trace_record *r = bc(t, A_BROADCAST, 1, 0, S_B);
      r->flags = LS_REC_EVENT_RECORDED | LS_REC_TIMED_OUT;
      t->h.flags = LS_TRACE_F_WATCHDOG; /* killed: no clean exit */
    }
    tb_write(t, dir);
  }
  expect_first(dir, "skip", 1, 0, 1);
  CHECK(strstr(out_buf, "exited cleanly after seq 0"), "skip detail:\n%s", out_buf);
  CHECK(strstr(out_buf, "divergence: timeout on comm 0xc0ffee11 at seq 1: rank 0"), "timeout listed:\n%s", out_buf);

  /* Two ranks, one call apart, and the lagging rank did not end cleanly (it hung
   * in its finalize while rank 1 hangs in an extra barrier, fixtures/mpi/hang.c
   * with two ranks): still a skip, the trace cannot tell the two apart. */
  dir = case_dir("tie-unclean");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    if (rk == 1)
      ar(t, 1, S_B)->state = LS_REC_ENTERED;
    else
      rec(t, A_DESTROY, LS_NO_SEQ, S_E)->state = LS_REC_ENTERED;
    t->h.flags = 0;
    tb_write(t, dir);
  }
  expect_first(dir, "skip", 1, 0, 1);
  CHECK(strstr(out_buf, "rank 0 never issued seq 1, which rank 1 issued as ncclAllReduce(count=4, dtype=ncclFloat32, "
                        "redop=ncclSum); its process did not exit cleanly"),
        "tie detail:\n%s", out_buf);

  /* Three ranks: rank 0 issues one call more than ranks 1 and 2. */
  dir = case_dir("extra-call");
  for (int rk = 0; rk < 3; rk++) {
    struct tb *t = tb_new(rk, 3);
    ar(t, 0, S_A);
    if (rk == 0)
      ar(t, 1, S_B);
    tb_write(t, dir);
  }
  expect_first(dir, "extra-call", 1, 0, 1);

  /* Three ranks, rank 2 lacks seq 1: the minority skipped. */
  dir = case_dir("skip3");
  for (int rk = 0; rk < 3; rk++) {
    struct tb *t = tb_new(rk, 3);
    ar(t, 0, S_A);
    if (rk != 2)
      ar(t, 1, S_B);
    tb_write(t, dir);
  }
  expect_first(dir, "skip", 1, 0, 2);
}

static void case_errors(void) {
  /* GroupEnd without GroupStart on rank 0. */
  char *dir = case_dir("api-error-groupend");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    if (rk == 0)
      group(t, A_GEND, 0)->rc = 5;
    ar(t, 1, S_B);
    tb_write(t, dir);
  }
  /* No seq of its own: it takes the next call's number (fixtures/README.md). */
  expect_first(dir, "api-error", 1, 0, -1);
  CHECK(strstr(out_buf, "ncclGroupEnd() returned ncclInvalidUsage"), "rc by name:\n%s", out_buf);

  /* Every rank's GroupEnd fails: one divergence naming both ranks. */
  dir = case_dir("api-error-all");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    ar(t, 1, S_B);
    group(t, A_GEND, 0)->rc = 5; /* after the last call: one past it */
    tb_write(t, dir);
  }
  expect_first(dir, "api-error", 2, 0, 1);
  CHECK(strstr(out_buf, "ranks 0 and 1: ncclGroupEnd() returned ncclInvalidUsage"), "merged:\n%s", out_buf);
  CHECK(!strstr(out_buf, "divergence: api-error on comm 0xc0ffee11 at seq 2: rank 1"), "listed once:\n%s",
        out_buf);

  /* An invalid root inside a group on rank 1: the call and the outer End both fail. */
  dir = case_dir("api-error-group");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    group(t, A_GSTART, 0);
    struct ls_trace_record *r = bc(t, A_BROADCAST, 0, rk ? 7 : 0, S_B);
    r->flags |= LS_REC_IN_GROUP;
    r->group_depth = 1;
    struct ls_trace_record *e = group(t, A_GEND, 1);
    if (rk == 1) {
      r->rc = 4;
      r->flags &= (uint16_t)~(LS_REC_EVENT_RECORDED | LS_REC_COMPLETED);
      e->rc = 4;
    }
    tb_write(t, dir);
  }
  int rc = run("compare", "--format=json", dir, NULL);
  CHECK(rc == 1, "exit %d", rc);
  cJSON *doc = parse_out();
  int napi = 0, nroot = 0;
  const cJSON *d, *divs = cJSON_GetObjectItemCaseSensitive(doc, "divergences");
  cJSON_ArrayForEach(d, divs) {
    napi += !strcmp(json_str(d, "class"), "api-error");
    nroot += !strcmp(json_str(d, "class"), "root-mismatch");
  }
  CHECK(napi == 2 && nroot == 1, "want 2 api-errors and a root-mismatch:\n%s", out_buf);
  cJSON_Delete(doc);
  rc = run("compare", dir, NULL);
  CHECK(strstr(out_buf, "ncclBroadcast(count=4, dtype=ncclFloat32, root=7) returned ncclInvalidArgument"),
        "invalid argument by name:\n%s", out_buf);

  /* The async error query reports ncclRemoteError on rank 1. */
  dir = case_dir("async-error");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    struct ls_trace_record *q = rec(t, A_ASYNC, LS_NO_SEQ, S_B);
    q->comm_id = COMM;
    q->flags = 0;
    q->aux0 = rk ? 6 : 0;
    tb_write(t, dir);
  }
  expect_first(dir, "async-error", 1, 1, -1);
  CHECK(strstr(out_buf, "ncclRemoteError"), "state by name:\n%s", out_buf);

  /* Rank 1's seq 1 was issued and returned but never completed; rank 0's seq 2
   * never returned at all. */
  dir = case_dir("incomplete");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    struct ls_trace_record *r = ar(t, 1, S_B);
    if (rk == 1) {
      r->flags = LS_REC_EVENT_RECORDED;
      ar(t, 2, S_C)->flags = LS_REC_EVENT_RECORDED;
      t->h.flags = 0;
    } else {
      ar(t, 2, S_C)->state = LS_REC_ENTERED;
    }
    tb_write(t, dir);
  }
  expect_first(dir, "incomplete", 1, 1, -1);
  CHECK(strstr(out_buf, "1 later call on rank 1 too"), "later calls counted:\n%s", out_buf);
  CHECK(strstr(out_buf, "never returned"), "entered call reported:\n%s", out_buf);

  /* A clean exit before the recorder saw the device finish: not evidence. */
  dir = case_dir("unobserved");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A)->flags = rk ? LS_REC_EVENT_RECORDED : (LS_REC_EVENT_RECORDED | LS_REC_COMPLETED);
    tb_write(t, dir);
  }
  rc = run("compare", dir, NULL);
  CHECK(rc == 0 && strstr(out_buf, "1 call was not observed completing"), "unobserved at clean exit: %d\n%s", rc,
        out_buf);

  /* The watchdog reported rank 1's seq 0. */
  dir = case_dir("timeout");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    struct ls_trace_record *r = ar(t, 0, S_A);
    if (rk == 1) {
      r->flags = LS_REC_EVENT_RECORDED | LS_REC_TIMED_OUT;
      t->h.flags = LS_TRACE_F_WATCHDOG;
    }
    tb_write(t, dir);
  }
  expect_first(dir, "timeout", 0, 1, -1);

  /* A deadlock: both ranks post an ungrouped send first; both time out at seq 1
   * (the p2p calls pair up, so nothing else diverges). */
  dir = case_dir("timeout-all");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    p2p(t, A_SEND, 1, 1 - rk, 1 << 20, S_B)->flags = LS_REC_EVENT_RECORDED | LS_REC_TIMED_OUT;
    p2p(t, A_RECV, 2, 1 - rk, 1 << 20, S_C)->flags = LS_REC_EVENT_RECORDED;
    t->h.flags = LS_TRACE_F_WATCHDOG;
    tb_write(t, dir);
  }
  expect_first(dir, "timeout", 1, 0, 1);
  CHECK(strstr(out_buf, "ranks 0 and 1: ncclSend("), "merged timeout:\n%s", out_buf);
}

/* ---- damaged input ------------------------------------------------------------ */

static void expect_bad(const char *what, const char *dir, const char *file, const char *needle) {
  int rc = run("compare", dir, NULL);
  CHECK(rc == 2, "%s: exit %d, want 2\n%s", what, rc, out_buf);
  CHECK(strstr(err_buf, file) != NULL, "%s: error should name %s:\n%s", what, file, err_buf);
  CHECK(strstr(err_buf, needle) != NULL, "%s: error should say '%s':\n%s", what, needle, err_buf);
  CHECK(!strstr(err_buf, "Sanitizer"), "%s: sanitizer report:\n%s", what, err_buf);
}

/* Writes a good rank-0 trace, lets `damage` change its bytes (and length),
 * and expects compare to fail naming the file. */
static void damaged(const char *name, void (*damage)(unsigned char *b, size_t *len), const char *needle) {
  char *dir = case_dir(name);
  struct tb *t = tb_new(0, 1);
  ar(t, 0, S_A);
  ar(t, 1, S_B);
  unsigned char *b = tb_bytes(t);
  size_t len = FILE_SIZE;
  damage(b, &len);
  char path[4200];
  snprintf(path, sizeof path, "%s/rank0.lstrace", dir);
  write_bytes(path, b, len);
  free(b);
  free(t);
  expect_bad(name, dir, "rank0.lstrace", needle);
}

static size_t cut_at;
static void d_cut(unsigned char *b, size_t *len) {
  (void)b;
  *len = cut_at;
}
static void d_magic(unsigned char *b, size_t *len) {
  (void)len;
  b[3] = 'X';
}
static void d_version(unsigned char *b, size_t *len) {
  (void)len;
  ((struct ls_trace_header *)b)->version = 99;
}
static void d_v1_record_size(unsigned char *b, size_t *len) {
  (void)len;
  ((struct ls_trace_header *)b)->version = 1;
}
static void d_api_index(unsigned char *b, size_t *len) {
  (void)len;
  ((struct ls_trace_record *)(b + REC_OFF))[1].api = NAPI + 3;
}
static void d_api_offset(unsigned char *b, size_t *len) {
  (void)len;
  ((struct ls_trace_header *)b)->api_offset = 1ull << 40;
}
static void d_modules_offset(unsigned char *b, size_t *len) {
  (void)len;
  ((struct ls_trace_header *)b)->modules_offset = FILE_SIZE - 8;
}
static void d_records_offset(unsigned char *b, size_t *len) {
  (void)len;
  ((struct ls_trace_header *)b)->records_offset = UINT64_MAX - 7;
}
/* Records start inside the module table: its zeros would read as unwritten slots. */
static void d_records_over_modules(unsigned char *b, size_t *len) {
  (void)len;
  ((struct ls_trace_header *)b)->records_offset = MOD_OFF + 1024;
}
static void d_modules_over_apis(unsigned char *b, size_t *len) {
  (void)len;
  ((struct ls_trace_header *)b)->modules_offset = API_OFF + 64;
}
static void d_launcher_rank(unsigned char *b, size_t *len) {
  (void)len;
  ((struct ls_trace_header *)b)->launcher_rank = 7;
  ((struct ls_trace_header *)b)->launcher_size = 4;
}
static void d_launcher_size(unsigned char *b, size_t *len) {
  (void)len;
  ((struct ls_trace_header *)b)->launcher_size = 0;
}
static void d_pid(unsigned char *b, size_t *len) {
  (void)len;
  ((struct ls_trace_header *)b)->pid = -3;
}
static void d_state(unsigned char *b, size_t *len) {
  (void)len;
  ((struct ls_trace_record *)(b + REC_OFF))[0].state = 9;
}
static void d_name(unsigned char *b, size_t *len) {
  (void)len;
  memset(((struct ls_trace_api *)(b + API_OFF))[2].name, 'x', 48);
}
static void d_rank(unsigned char *b, size_t *len) {
  (void)len;
  ((struct ls_trace_record *)(b + REC_OFF))[0].comm_rank = 5;
}

static void case_damaged(void) {
  /* the last cut ends inside the second of the two claimed records */
  size_t cuts[] = {0, 5, 100, LS_TRACE_HEADER_SIZE + 10, REC_OFF + 64, REC_OFF + 2 * LS_TRACE_RECORD_SIZE - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "truncated-%zu", cuts[i]);
    cut_at = cuts[i];
    damaged(name, d_cut, cuts[i] == 0 ? "empty file" : cuts[i] < 8 ? "not a lockstep trace" : "offset");
  }
  /* Since version 2 the file grows with its records: one that ends right after its
   * claimed records is whole. */
  {
    char *dir = case_dir("grown");
    struct tb *t = tb_new(0, 1);
    ar(t, 0, S_A);
    ar(t, 1, S_B);
    unsigned char *b = tb_bytes(t);
    char path[4200];
    snprintf(path, sizeof path, "%s/rank0.lstrace", dir);
    write_bytes(path, b, REC_OFF + 2 * LS_TRACE_RECORD_SIZE);
    free(b);
    free(t);
    int rc = run("compare", dir, NULL);
    CHECK(rc == 0 && strstr(out_buf, "lockstep: consistent: 1 trace"), "grown file: %d\n%s%s", rc, out_buf, err_buf);
  }
  damaged("bad-magic", d_magic, "offset 0: not a lockstep trace");
  damaged("bad-version", d_version, "offset 8: unsupported trace version 99");
  damaged("v1-record-size", d_v1_record_size, "record size 192, expected 128 for version 1");
  damaged("api-index", d_api_index, "api index 14 out of range");
  damaged("api-offset", d_api_offset, "api table");
  damaged("modules-offset", d_modules_offset, "module table");
  damaged("records-offset", d_records_offset, "offset 64: records offset");
  damaged("records-over-modules", d_records_over_modules, "offset 64: records [");
  damaged("records-over-modules", d_records_over_modules, "overlap the module table");
  damaged("modules-over-apis", d_modules_over_apis, "overlaps the api table");
  damaged("launcher-rank", d_launcher_rank, "launcher rank 7 is not within a world of size 4");
  damaged("launcher-size", d_launcher_size, "launcher world size 0");
  damaged("pid", d_pid, "process id -3");
  damaged("bad-state", d_state, "invalid state 9");
  damaged("api-name", d_name, "not NUL-terminated");
  damaged("bad-rank", d_rank, "not within a communicator of size 1");

  char *dir = case_dir("foreign");
  char path[4200];
  snprintf(path, sizeof path, "%s/notes.lstrace", dir);
  write_bytes(path, "#!/bin/sh\necho hello\n", 21);
  expect_bad("foreign", dir, "notes.lstrace", "not a lockstep trace");

  dir = case_dir("empty-dir");
  expect_bad("empty directory", dir, "empty-dir", "no *.lstrace trace files");

  /* Beside a good trace, one damaged file still fails the whole run. */
  dir = case_dir("one-bad");
  write_consistent(dir);
  snprintf(path, sizeof path, "%s/rank1.lstrace", dir);
  truncate(path, 5000);
  expect_bad("one bad of two", dir, "rank1.lstrace", "truncated");
}

/* A trace whose capacity ran out: the missing tail is not a skip. */
static void case_partial(void) {
  char *dir = case_dir("partial");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    ar(t, 1, S_A);
    if (rk == 0)
      ar(t, 2, S_B);
    else
      t->h.nrecords = CAP + 5; /* claimed more than it could store */
    tb_write(t, dir);
  }
  /* Rank 1 claimed CAP+5 slots but its records past index 1 are FREE: what it
   * dropped was not seen, so the run is not known to be consistent. */
  int rc = run("compare", "--format=json", dir, NULL);
  CHECK(rc == 3, "partial: exit %d, want 3 (incomplete)\n%s%s", rc, out_buf, err_buf);
  cJSON *doc = parse_out();
  if (doc) {
    CHECK(!strcmp(json_str(doc, "status"), "incomplete"), "status\n%s", out_buf);
    const char *m = cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "incomplete"), 0));
    CHECK(m && strstr(m, "rank1.lstrace: the trace is partial: 5 calls were not recorded"), "incomplete[0]\n%s",
          out_buf);
    cJSON_Delete(doc);
  }
}

/* compare DIR exits want_rc and one of its 'incomplete:' lines holds both needles;
 * confirm with no finding to confirm says incomplete too (exit 3). */
static void expect_incomplete(const char *what, const char *dir, int want_rc, const char *n1, const char *n2) {
  int rc = run("compare", dir, NULL);
  CHECK(rc == want_rc, "%s: compare exit %d, want %d\n%s%s", what, rc, want_rc, out_buf, err_buf);
  const char *line = strstr(out_buf, "incomplete: ");
  int found = 0;
  for (; line; line = strstr(line + 1, "\nincomplete: ")) {
    const char *eol = strchr(line + 1, '\n');
    size_t n = eol ? (size_t)(eol - line) : strlen(line);
    char buf[2048];
    snprintf(buf, sizeof buf, "%.*s", (int)n, line);
    if (strstr(buf, n1) && (!n2 || strstr(buf, n2)))
      found = 1;
  }
  CHECK(found, "%s: no 'incomplete:' line with '%s' / '%s':\n%s", what, n1, n2 ? n2 : "", out_buf);
  if (want_rc == 3)
    CHECK(strstr(out_buf, "lockstep: incomplete: ") != NULL, "%s: summary\n%s", what, out_buf);
  char lint[4200];
  snprintf(lint, sizeof lint, "%s/lint-empty.json", workdir);
  write_bytes(lint, "{\"findings\": []}", strlen("{\"findings\": []}"));
  rc = run("confirm", "--findings", lint, "--traces", dir, "--format=json", NULL);
  /* nothing to confirm: with part of the run missing that is "incomplete", never 0 */
  CHECK(rc == 3, "%s: confirm exit %d\n%s%s", what, rc, out_buf, err_buf);
  cJSON *doc = parse_out();
  if (doc) {
    CHECK(!strcmp(json_str(doc, "status"), "incomplete"), "%s: confirm status\n%s", what, out_buf);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "incomplete")) > 0, "%s: confirm's list\n%s",
          what, out_buf);
    cJSON_Delete(doc);
  }
}

/* Data compare did not see is never "consistent". */
static void case_incomplete(void) {
  int rc;
  /* Four ranks, rank 0's trace gone: the other three agree. */
  char *dir = case_dir("missing-rank");
  for (int rk = 1; rk < 4; rk++) {
    struct tb *t = tb_new(rk, 4);
    ar(t, 0, S_A);
    ar(t, 1, S_B);
    tb_write(t, dir);
  }
  expect_incomplete("missing rank", dir, 3, "missing-rank: communicator 0xc0ffee11: no trace for rank 0 of 4", NULL);
  expect_incomplete("missing launcher rank", dir, 3, "missing-rank: no trace from launcher rank 0 of 4", NULL);

  /* A seq that jumps by 2^32: the calls after the hole are not compared. */
  dir = case_dir("seq-jump");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    ar(t, 1, S_A);
    ar(t, rk ? 2 + (1ull << 32) : 2, S_B);
    tb_write(t, dir);
  }
  expect_incomplete("seq jump", dir, 3, "rank1.lstrace: rank 1's calls on communicator 0xc0ffee11 jump from seq 1 to "
                                        "seq 4294967298", "1 call after the hole was not compared");

  /* No communicator at all: group calls only. */
  dir = case_dir("no-comm");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    group(t, A_GSTART, 0);
    group(t, A_GEND, 1)->flags = LS_REC_OUTER_GROUP_END;
    tb_write(t, dir);
  }
  expect_incomplete("no communicator", dir, 3, "no-comm: no communicator was recorded in 2 traces", NULL);

  /* A slot claimed and never written (the process died between the two). */
  dir = case_dir("unwritten");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    if (rk == 1)
      rec(t, A_ALLREDUCE, 1, S_B)->state = LS_REC_FREE;
    else
      ar(t, 1, S_B);
    tb_write(t, dir);
  }
  expect_incomplete("unwritten slot", dir, 3, "rank1.lstrace: 1 of its 2 claimed record slots were never written",
                    NULL);

  /* Three of four ranks never returned from seq 1: the note names all three. */
  dir = case_dir("never-returned");
  for (int rk = 0; rk < 4; rk++) {
    struct tb *t = tb_new(rk, 4);
    ar(t, 0, S_A);
    struct ls_trace_record *r = ar(t, 1, S_B);
    if (rk != 1) {
      r->state = LS_REC_ENTERED;
      r->flags = 0;
      t->h.flags = 0;
    }
    tb_write(t, dir);
  }
  rc = run("compare", dir, NULL);
  CHECK(rc == 1 && strstr(out_buf, "note: 3 ranks (0, 2, 3): ncclAllReduce(count=4, dtype=ncclFloat32, "
                                   "redop=ncclSum) never returned"),
        "never returned: %d\n%s%s", rc, out_buf, err_buf);

  /* Two runs in one directory: two communicators, each whole, but every launcher rank
   * twice: consistent, with a note to give each run its own directory. */
  dir = case_dir("two-runs");
  for (int run_no = 0; run_no < 2; run_no++) {
    tb_prefix = run_no ? "second" : "rank";
    for (int rk = 0; rk < 2; rk++) {
      struct tb *t = tb_new(rk, 2);
      t->h.t0_realtime_ns += run_no * 60000000000ull;
      ar(t, 0, S_A)->comm_id = COMM + (uint64_t)run_no;
      tb_write(t, dir);
    }
  }
  tb_prefix = "rank";
  rc = run("compare", dir, NULL);
  CHECK(rc == 0 && strstr(out_buf, "launcher rank 0 has two traces") &&
            strstr(out_buf, "started 60.0 s apart: traces of two runs in one directory?") &&
            strstr(out_buf, "give each run its own --trace-dir"),
        "two runs: %d\n%s%s", rc, out_buf, err_buf);

  /* A divergence found in what was seen is still divergent (exit 1), and the
   * missing part is listed beside it. */
  dir = case_dir("divergent-missing");
  for (int rk = 1; rk < 4; rk++) {
    struct tb *t = tb_new(rk, 4);
    if (rk == 2)
      bc(t, A_BROADCAST, 0, 0, S_B);
    else
      ar(t, 0, S_A);
    tb_write(t, dir);
  }
  expect_incomplete("divergent with a rank missing", dir, 1, "no trace for rank 0 of 4", NULL);
  run("compare", dir, NULL);
  CHECK(strstr(out_buf, "lockstep: divergent: ") != NULL, "divergent summary\n%s", out_buf);
}

/* ---- trace export ---------------------------------------------------------------- */

static void write_skip(const char *dir) {
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    if (rk == 0) {
      struct ls_trace_record *r = bc(t, A_BROADCAST, 1, 0, S_B);
      r->flags = LS_REC_EVENT_RECORDED | LS_REC_TIMED_OUT;
      t->h.flags = LS_TRACE_F_WATCHDOG;
    }
    tb_write(t, dir);
  }
}

static void case_export(void) {
  char *dir = case_dir("consistent");
  write_consistent(dir);
  int rc = run("trace", "export", dir, NULL);
  CHECK(rc == 0, "export exit %d: %s", rc, err_buf);
  cJSON *doc = parse_out();
  const cJSON *traces = cJSON_GetObjectItemCaseSensitive(doc, "traces");
  CHECK(cJSON_GetArraySize(traces) == 2, "two traces");
  const cJSON *t0 = cJSON_GetArrayItem(traces, 0);
  const cJSON *recs = cJSON_GetObjectItemCaseSensitive(t0, "records");
  CHECK(cJSON_GetArraySize(recs) == 9, "9 records, got %d", cJSON_GetArraySize(recs));
  const cJSON *r1 = cJSON_GetArrayItem(recs, 1);
  CHECK(r1 && !strcmp(json_str(r1, "api"), "ncclAllReduce") && !strcmp(json_str(r1, "state"), "returned") &&
            !strcmp(json_str(r1, "dtype"), "ncclFloat32") && !strcmp(json_str(r1, "redop"), "ncclSum") &&
            !strcmp(json_str(r1, "rc"), "ncclSuccess") && !strcmp(json_str(r1, "comm"), "0xc0ffee11") &&
            json_int(r1, "seq") == 0 && !strcmp(json_str(r1, "kind"), "collective"),
        "record 1 by name:\n%s", out_buf);
  const cJSON *site = cJSON_GetObjectItemCaseSensitive(r1, "site");
  CHECK(site && strstr(json_str(site, "file"), "tools_test.c") && json_int(site, "line") == site_line[S_A],
        "record 1 site should be tools_test.c:%d", site_line[S_A]);
  const cJSON *r2 = cJSON_GetArrayItem(recs, 2);
  CHECK(r2 && !strcmp(json_str(r2, "api"), "ncclBcast") && !strcmp(json_str(r2, "op"), "broadcast") &&
            json_int(r2, "root") == 0 && cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(r2, "redop")),
        "record 2 (ncclBcast):\n%s", out_buf);
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(t0, "header");
  const cJSON *t0rt = cJSON_GetObjectItemCaseSensitive(h, "t0_realtime_ns");
  CHECK(strstr(out_buf, "\"t0_realtime_ns\":\t1764470000000000000") && cJSON_IsNumber(t0rt),
        "64-bit times must be written exactly");
  cJSON_Delete(doc);

  /* Perfetto: one process per rank, slices, device async pairs, the divergence. */
  dir = case_dir("skip");
  write_skip(dir);
  char out[4200];
  snprintf(out, sizeof out, "%s/timeline.json", workdir);
  rc = run("trace", "export", "--format=perfetto", "-o", out, dir, NULL);
  CHECK(rc == 0, "perfetto exit %d: %s", rc, err_buf);
  slurp(out, out_buf, sizeof out_buf);
  doc = parse_out();
  const cJSON *ev, *events = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");
  int nx[3] = {0}, nb = 0, ne = 0, nflow = 0, nglobal = 0, nthread = 0, nproc = 0, bad_ts = 0;
  cJSON_ArrayForEach(ev, events) {
    const char *ph = json_str(ev, "ph");
    int pid = json_int(ev, "pid");
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
    bad_ts += !cJSON_IsNumber(ts) || ts->valuedouble < 0;
    if (!strcmp(ph, "X") && pid >= 1 && pid <= 2) {
      nx[pid]++;
      bad_ts += !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(ev, "dur"));
    }
    nb += !strcmp(ph, "b");
    ne += !strcmp(ph, "e");
    nflow += !strcmp(ph, "s") || !strcmp(ph, "f");
    if (!strcmp(ph, "i") && strstr(json_str(ev, "name"), "skip at seq 1"))
    {
      if (!strcmp(json_str(ev, "s"), "g"))
        nglobal++;
      else
        nthread++;
    }
    nproc += !strcmp(ph, "M") && !strcmp(json_str(ev, "name"), "process_name");
  }
  CHECK(nproc == 2, "one process per rank, got %d", nproc);
  CHECK(nx[1] == 2 && nx[2] == 1, "slices per rank: %d, %d", nx[1], nx[2]);
  CHECK(nb == 2 && ne == 2, "device completion slices: %d b, %d e", nb, ne);
  CHECK(nflow == 4, "flow events host -> device: %d", nflow);
  CHECK(nglobal == 1 && nthread == 2, "divergence instants: %d global, %d thread", nglobal, nthread);
  CHECK(bad_ts == 0, "every event needs ts >= 0 (and X a dur)");
  cJSON_Delete(doc);
  /* Ranks' clocks differ (t0_monotonic); aligned times must coincide. */
  CHECK(strstr(out_buf, "\"ts\":\t1000,") != NULL, "rank-aligned times");

  dir = case_dir("bad");
  snprintf(out, sizeof out, "%s/x.lstrace", dir);
  write_bytes(out, "LSTRACE1", 8);
  rc = run("trace", "export", out, NULL);
  CHECK(rc == 2 && strstr(err_buf, "x.lstrace: offset 8: truncated"), "damaged export: %d %s", rc, err_buf);
}

/* ---- confirm ---------------------------------------------------------------------- */

static void write_lint(const char *path, const char *file) {
  FILE *f = fopen(path, "w");
  fprintf(f,
          "{\"version\":1,\"tool\":\"lockstep\",\"findings\":[\n"
          " {\"rule\":\"rank-divergent-collective\",\"file\":\"%s\",\"line\":%d,\"column\":3,\"function\":\"f\","
          "\"message\":\"m\",\"fingerprint\":\"fp1\",\"notes\":[],"
          "\"sites\":[{\"file\":\"%s\",\"line\":%d,\"column\":3,\"callee\":\"ncclBroadcast\"}]},\n"
          " {\"rule\":\"rank-dependent-argument\",\"file\":\"%s\",\"line\":%d,\"column\":3,\"function\":\"f\","
          "\"message\":\"m\",\"fingerprint\":\"fp2\",\"notes\":[],\"sites\":[]},\n"
          " {\"rule\":\"ungrouped-p2p\",\"file\":\"%s\",\"line\":9999,\"column\":3,\"function\":\"f\","
          "\"message\":\"m\",\"fingerprint\":\"fp3\",\"notes\":[],\"sites\":[]},\n"
          " {\"rule\":\"unbalanced-group\",\"file\":\"%s\",\"line\":9998,\"column\":3,\"function\":\"f\","
          "\"message\":\"m\",\"fingerprint\":\"fp4\",\"notes\":[],"
          "\"sites\":[{\"file\":\"%s\",\"line\":%d,\"column\":3,\"callee\":\"ncclGroupEnd\"}]},\n"
          " {\"rule\":\"rank-divergent-collective\",\"file\":\"other/%s\",\"line\":%d,\"column\":3,"
          "\"function\":\"f\",\"message\":\"m\",\"fingerprint\":\"fp5\",\"notes\":[],\"sites\":[]}\n"
          "],\"tus\":[]}\n",
          file, site_line[S_B], file, site_line[S_B], file, site_line[S_A], file, file, file, site_line[S_E], file,
          site_line[S_B]);
  fclose(f);
}

static void case_confirm(void) {
  /* The skip run: rank 1 never issues the broadcast at S_B; rank 1's GroupEnd
   * at S_E fails with ncclInvalidUsage. */
  char *dir = case_dir("traces");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    ar(t, 0, S_A);
    if (rk == 1)
      group(t, A_GEND, 0)->rc = 5;
    if (rk == 0)
      bc(t, A_BROADCAST, 1, 0, S_B)->flags = LS_REC_EVENT_RECORDED | LS_REC_TIMED_OUT;
    tb_write(t, dir);
  }
  char lint[4200];
  snprintf(lint, sizeof lint, "%s/lint.json", workdir);
  /* Lint saw the file relative to the source tree; the run's debug info has
   * the absolute path: they must still join. */
  write_lint(lint, "./x/../tests/tools/tools_test.c");
  int rc = run("confirm", "--findings", lint, "--traces", dir, "--format=json", NULL);
  CHECK(rc == 1, "confirm exit %d, want 1: %s", rc, err_buf);
  cJSON *doc = parse_out();
  const cJSON *fs = cJSON_GetObjectItemCaseSensitive(doc, "findings");
  const char *want[] = {"confirmed", "exercised", "not-exercised", "confirmed", "not-exercised"};
  for (int i = 0; i < 5; i++) {
    const cJSON *f = cJSON_GetArrayItem(fs, i);
    const char *got = f ? json_str(f, "status") : NULL;
    CHECK(got && !strcmp(got, want[i]), "finding %d: %s, want %s\n%s", i, got ? got : "(none)", want[i], out_buf);
  }
  const cJSON *ev = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(fs, 0), "evidence"), 0);
  CHECK(ev && !strcmp(json_str(ev, "class"), "skip") && json_int(ev, "seq") == 1, "evidence of finding 0:\n%s",
        out_buf);
  ev = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(fs, 3), "evidence"), 0);
  CHECK(ev && !strcmp(json_str(ev, "class"), "api-error"), "unbalanced-group confirmed by the api-error");
  CHECK(json_int(cJSON_GetArrayItem(fs, 1), "hits") == 2, "finding 1 hit by both ranks");
  CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "debug_info")), "debug_info");
  cJSON_Delete(doc);
  rc = run("confirm", "--findings", lint, "--traces", dir, NULL);
  CHECK(rc == 1 && strstr(out_buf, "confirmed      rank-divergent-collective  ./x/../tests/tools/tools_test.c:") &&
            strstr(out_buf, "skip on comm 0xc0ffee11 at seq 1 (ranks 0,1)") &&
            strstr(out_buf, "2 confirmed, 1 exercised, 2 not exercised"),
        "text table:\n%s", out_buf);

  /* Only consistent calls at the sites: exercised, exit 0. */
  dir = case_dir("consistent");
  write_consistent(dir);
  rc = run("confirm", "--findings", lint, "--traces", dir, NULL);
  CHECK(rc == 0 && strstr(out_buf, "0 confirmed, 3 exercised, 2 not exercised"), "consistent run: %d\n%s", rc,
        out_buf);

  /* Call sites without debug info: nothing can be joined, and it says so. */
  dir = case_dir("nodebug");
  for (int rk = 0; rk < 2; rk++) {
    struct tb *t = tb_new(rk, 2);
    snprintf(t->mods[0].path, sizeof t->mods[0].path, "%s/nodebug.bin", workdir);
    ar(t, 0, S_A);
    tb_write(t, dir);
  }
  char cmd[8600];
  snprintf(cmd, sizeof cmd, "objcopy --strip-debug '%s' '%s/nodebug.bin'", self_module.path, workdir);
  CHECK(system(cmd) == 0, "objcopy failed");
  rc = run("confirm", "--findings", lint, "--traces", dir, NULL);
  CHECK(rc == 2 && strstr(err_buf, "no call site in these traces has file:line"), "no debug info: %d\n%s", rc,
        err_buf);
  CHECK(strstr(err_buf, "no debug info for its call sites"), "symbolizer note:\n%s", err_buf);
  rc = run("compare", dir, NULL);
  CHECK(rc == 0, "compare works without debug info");

  /* A broken findings file is named with line:column. */
  write_bytes(lint, "{\"findings\": [\n  {\"rule\": }\n", 28);
  rc = run("confirm", "--findings", lint, "--traces", dir, NULL);
  CHECK(rc == 2 && strstr(err_buf, "lint.json:2:") && strstr(err_buf, "invalid JSON"), "bad lint: %s", err_buf);
  rc = run("confirm", "--traces", dir, NULL);
  CHECK(rc == 2, "missing --findings");
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: tools_test CASE LOCKSTEP WORKDIR\n");
    return 2;
  }
  lockstep = argv[2];
  /* Cases run in parallel: each gets its own folder. */
  static char wd[4096];
  snprintf(wd, sizeof wd, "%s/%s", argv[3], argv[1]);
  workdir = wd;
  mkdirs(workdir);
  capture_sites();
  find_self_module();
  static const struct {
    const char *name;
    void (*fn)(void);
  } cases[] = {
      {"consistent", case_consistent}, {"mismatches", case_mismatches}, {"p2p", case_p2p},
      {"skip", case_skip},             {"errors", case_errors},         {"damaged", case_damaged},
      {"partial", case_partial},       {"export", case_export},         {"confirm", case_confirm},
      {"incomplete", case_incomplete},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (!strcmp(argv[1], cases[i].name)) {
      cases[i].fn();
      if (failed)
        fprintf(stderr, "FAIL %s\n", argv[1]);
      return failed;
    }
  fprintf(stderr, "unknown case %s\n", argv[1]);
  return 2;
}
