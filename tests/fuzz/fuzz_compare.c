/* fuzz_compare.c — libFuzzer harness for the compare step (runtime/tools/compare.c and
 * the reports built on it). The input is split at "LSFZ" into 2-4 parts; each part is a
 * compact description of one rank's trace (tables and 20-byte records, every field the
 * fuzzer's) that is expanded into a well-formed trace file, so nearly every input reaches
 * the alignment instead of stopping at the reader's checks (fuzz_trace covers those).
 * The traces then go through `lockstep compare` (json and text) and the perfetto export. */
#include "fuzz_common.h"

#include "apidb.h"
#include "commands.h"
#include "compare.h"
#include "report.h"
#include "symbolize.h"
#include "trace_read.h"

#include <cjson/cJSON.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Api names a recorder may write; the table's kind/family/op_class are fuzzed. */
static const char *const api_names[] = {
    "ncclAllReduce", "ncclBroadcast",  "ncclBcast",        "ncclReduce",        "ncclAllGather",
    "ncclReduceScatter", "ncclSend",   "ncclRecv",         "ncclGroupStart",    "ncclGroupEnd",
    "ncclCommInitRank", "ncclCommSplit", "ncclCommDestroy", "ncclCommAbort",    "ncclCommGetAsyncError",
    "MPI_Allreduce",  "MPI_Bcast",     "MPI_Send",         "MPI_Irecv",         "MPI_Wait",
    "MPI_Comm_split", "lockstep_watchdog", "unknownApi",   "ncclAlltoAll"};
#define NAPI_NAMES (sizeof api_names / sizeof api_names[0])
#define REC_BYTES 20

struct reader {
  const uint8_t *p;
  size_t n;
};

static uint8_t take(struct reader *rd) {
  if (!rd->n)
    return 0;
  rd->n--;
  return *rd->p++;
}

/* Expands one part into a trace file image; returns its size (buffer owned by caller). */
static unsigned char *build_trace(const uint8_t *p, size_t n, size_t *outsize) {
  struct reader rd = {p, n};
  struct ls_trace_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, LS_TRACE_MAGIC, 8);
  h.version = LS_TRACE_VERSION;
  h.header_size = LS_TRACE_HEADER_SIZE;
  h.record_size = LS_TRACE_RECORD_SIZE;
  h.launcher_rank = (int8_t)take(&rd);
  h.launcher_size = (int8_t)take(&rd);
  /* the reader rejects a launcher rank outside the launcher's world */
  if (h.launcher_size <= 0)
    h.launcher_size = -1;
  if (h.launcher_rank < -1 || (h.launcher_size > 0 && h.launcher_rank >= h.launcher_size))
    h.launcher_rank = h.launcher_size > 0 ? h.launcher_rank % h.launcher_size : -1;
  if (h.launcher_rank < -1)
    h.launcher_rank = -1;
  h.flags = take(&rd) & 7u;
  h.napis = 1u + take(&rd) % 32u;
  h.nmodules = take(&rd) % 4u;
  unsigned overflow = take(&rd) % 4u; /* claimed beyond capacity: dropped records */
  h.pid = 1000 + h.launcher_rank;
  h.t0_realtime_ns = 1700000000000000000ull;
  h.t0_monotonic_ns = 1000000;
  h.timeout_ms = 1000;
  snprintf(h.hostname, sizeof h.hostname, "host%u", (unsigned)take(&rd) % 3u);
  snprintf(h.exe, sizeof h.exe, "/nonexistent/prog");

  struct ls_trace_api apis[32];
  memset(apis, 0, sizeof apis);
  for (uint32_t i = 0; i < h.napis; i++) {
    snprintf(apis[i].name, sizeof apis[i].name, "%s", api_names[take(&rd) % NAPI_NAMES]);
    apis[i].kind = take(&rd) % 17u;
    apis[i].family = take(&rd) % 4u;
    apis[i].op_class = take(&rd) % 8u;
  }
  struct ls_trace_module mods[4];
  memset(mods, 0, sizeof mods);
  for (uint32_t i = 0; i < h.nmodules; i++) {
    mods[i].base = 0x400000ull * (i + 1);
    mods[i].start = mods[i].base + take(&rd) * 16ull;
    mods[i].end = mods[i].start + take(&rd) * 256ull;
    snprintf(mods[i].path, sizeof mods[i].path, "/nonexistent/lib%u.so", i);
  }
  uint64_t nrec = rd.n / REC_BYTES;
  h.capacity = nrec;
  h.nrecords = nrec + overflow;
  h.api_offset = LS_TRACE_HEADER_SIZE;
  h.modules_offset = (h.api_offset + h.napis * sizeof(struct ls_trace_api) + 7u) & ~7ull;
  h.records_offset = h.modules_offset + LS_TRACE_MAX_MODULES * sizeof(struct ls_trace_module);
  size_t size = (size_t)(h.records_offset + nrec * LS_TRACE_RECORD_SIZE);
  unsigned char *img = calloc(1, size);
  if (!img)
    abort();
  memcpy(img, &h, sizeof h);
  memcpy(img + h.api_offset, apis, h.napis * sizeof(struct ls_trace_api));
  memcpy(img + h.modules_offset, mods, sizeof mods);
  struct ls_trace_record *recs = (struct ls_trace_record *)(img + h.records_offset);
  for (uint64_t i = 0; i < nrec; i++) {
    struct ls_trace_record *r = &recs[i];
    uint8_t b[REC_BYTES];
    for (int k = 0; k < REC_BYTES; k++)
      b[k] = take(&rd);
    r->state = b[0] % 3u;
    r->api = (uint16_t)(b[1] % h.napis);
    r->flags = b[2] & 0x7fu;
    r->comm_id = b[3] == 0 ? 0 : b[3] >= 0xf8 ? UINT64_MAX - (b[3] & 7u) : 0x1000u + (b[3] & 7u);
    r->seq = b[4] == 0xff ? LS_NO_SEQ : b[4] >= 0xf0 ? (uint64_t)b[4] << 40 : b[4] % 24u;
    r->count = (uint64_t)b[5] | (uint64_t)b[6] << 8;
    if (b[6] == 0xff)
      r->count = UINT64_MAX - b[5];
    r->dtype = (int8_t)b[7];
    r->redop = (int8_t)b[8];
    r->root_or_peer = (int8_t)b[9];
    r->rc = (int8_t)b[10] % 16;
    r->group_depth = (int8_t)b[11] % 4;
    r->comm_size = 1 + b[13] % 8;
    r->comm_rank = b[12] % (unsigned)r->comm_size;
    r->tid = 100u + b[14] % 4u;
    r->t_enter_ns = h.t0_monotonic_ns + (uint64_t)b[15] * 1000u + i;
    r->t_exit_ns = r->t_enter_ns + (uint64_t)b[16] * 1000u;
    r->t_complete_ns = b[17] == 0xff ? UINT64_MAX : r->t_exit_ns + (uint64_t)b[17] * 1000u;
    r->site_pc = h.nmodules ? mods[b[18] % h.nmodules].start + (b[18] >> 2) : b[18];
    r->aux0 = b[19] & 0x0fu ? 0x1000u + (b[19] & 7u) : (uint64_t)(int64_t)(int8_t)b[19];
    r->aux1 = b[19] >> 4;
  }
  *outsize = size;
  return img;
}

static struct ls_apidb db;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fz_init_io();
  setenv("PATH", "/nonexistent", 1); /* no addr2line: see fuzz_trace.c */
  if (!getenv("LOCKSTEP_RULES_DIR")) {
#ifdef LOCKSTEP_FUZZ_RULES_DIR
    setenv("LOCKSTEP_RULES_DIR", LOCKSTEP_FUZZ_RULES_DIR, 1);
#endif
  }
  ls_apidb_load(&db);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* Split at the separator; at most 4 parts, at least 2 (an empty second part is a
   * trace without records). */
  static const char sep[4] = {'L', 'S', 'F', 'Z'};
  const uint8_t *part[4];
  size_t plen[4];
  int nparts = 0;
  const uint8_t *start = data, *end = data + size;
  for (const uint8_t *q = data; nparts < 3 && q + 4 <= end; q++) {
    if (!memcmp(q, sep, 4)) {
      part[nparts] = start;
      plen[nparts++] = (size_t)(q - start);
      start = q + 4;
      q += 3;
    }
  }
  part[nparts] = start;
  plen[nparts++] = (size_t)(end - start);
  if (nparts < 2) {
    part[1] = end;
    plen[1] = 0;
    nparts = 2;
  }

  struct fz_file files[4];
  for (int i = 0; i < nparts; i++) {
    size_t n;
    unsigned char *img = build_trace(part[i], plen[i], &n);
    fz_file_open(&files[i], img, n);
    free(img);
  }
  /* The library path with rules parsed once (a rules parse per input would be most
   * of the time): load, compare, and every report of every divergence. */
  char *paths[4];
  for (int i = 0; i < nparts; i++)
    paths[i] = files[i].path;
  struct ls_trace_set set;
  fz_capture_begin();
  int lrc = ls_trace_set_load(&set, paths, (size_t)nparts);
  const char *msg = fz_capture_end();
  if (lrc != 0)
    fz_contract("a trace built by the harness does not load", msg);
  struct ls_compare cmp;
  int want_rc = 2;
  fz_capture_begin();
  int crc = ls_compare_run(&set, &db, &cmp);
  msg = fz_capture_end();
  if (crc != 0) {
    /* A refusal to compare (exit 2 in the CLI) must name a file. */
    int named = 0;
    for (int i = 0; i < nparts; i++)
      named |= strstr(msg, files[i].path) != NULL;
    if (!named)
      fz_contract("compare refused the traces without naming a file", msg);
  } else {
    struct ls_symbolizer *sym = ls_sym_new();
    ls_divergences_want(sym, &cmp);
    ls_sym_run(sym);
    for (size_t i = 0; i < cmp.ndiv; i++) {
      const struct ls_divergence *d = &cmp.div[i];
      if (!d->cls || d->nranks < 0 || d->nranks > 2)
        fz_contract("a divergence without a class or with a bad rank count", d->detail);
      if (!memchr(d->detail, 0, sizeof d->detail))
        fz_contract("a divergence detail is not terminated", "");
      ls_divergence_print(stdout, &db, sym, d);
      struct cJSON *j = ls_divergence_json(sym, d);
      ls_json_print(stdout, j);
      cJSON_Delete(j);
      for (int k = 0; k < d->nranks; k++)
        if (d->site[k].r) {
          char buf[256];
          ls_format_call(&db, d->site[k], buf, sizeof buf);
        }
    }
    for (size_t i = 0; i < cmp.nnotes; i++)
      (void)strlen(cmp.notes[i]);
    /* what compare did not see names a file, or the directory they are in */
    for (size_t i = 0; i < cmp.nmissing; i++)
      if (!strstr(cmp.missing[i], "/proc/self/fd"))
        fz_contract("an incomplete item names no file", cmp.missing[i]);
    want_rc = cmp.ndiv ? 1 : cmp.nmissing ? 3 : 0;
    ls_sym_free(sym);
    ls_compare_free(&cmp);
  }
  ls_trace_set_free(&set);

  /* One input in 16 (by size, so a saved input reproduces) also goes through the
   * commands as the binary runs them: compare json/text and the perfetto export. */
  if (size % 16 == 0) {
    char *argv[12];
    int argc = 0;
    argv[argc++] = "compare";
    argv[argc++] = "--format=json";
    for (int i = 0; i < nparts; i++)
      argv[argc++] = files[i].path;
    argv[argc] = NULL;
    fz_capture_begin();
    int rc = ls_cmd_compare(argc, argv);
    msg = fz_capture_end();
    if (rc != want_rc)
      fz_contract("compare's exit code disagrees with ls_compare_run (divergent 1, incomplete 3, else 0; 2 refused)",
                  msg);
    argv[1] = "--format=text";
    fz_capture_begin();
    int rc_text = ls_cmd_compare(argc, argv);
    msg = fz_capture_end();
    if (rc_text != rc)
      fz_contract("compare --format=text and --format=json disagree on the exit code", msg);
    char *xargv[12];
    int xargc = 0;
    xargv[xargc++] = "trace";
    xargv[xargc++] = "export";
    xargv[xargc++] = "--format=perfetto";
    xargv[xargc++] = "-o";
    xargv[xargc++] = "/dev/null";
    for (int i = 0; i < nparts; i++)
      xargv[xargc++] = files[i].path;
    xargv[xargc] = NULL;
    fz_capture_begin();
    int x = ls_cmd_trace(xargc, xargv);
    msg = fz_capture_end();
    if (x != 0)
      fz_contract("trace export failed on well-formed traces", msg);
  }

  for (int i = 0; i < nparts; i++)
    fz_file_close(&files[i]);
  return 0;
}
