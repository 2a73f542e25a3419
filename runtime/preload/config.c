/* config.c — the one reader of the environment in liblockstep (see config.h): every
 * getenv of the preloaded library is here, each variable read once per process, and each
 * parsed exactly as documented in runtime/README.md (a bad value keeps the default). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "trace_index.h"

struct ls_config ls_cfg;

/* Copies of the strings kept (the program may change its environment later). */
static char g_pool[8192];
static size_t g_pool_used;

static const char *keep(const char *v) {
  if (!v)
    return NULL;
  size_t n = strlen(v) + 1;
  if (n > sizeof g_pool - g_pool_used)
    return v; /* too long to copy: the environment's own string */
  char *p = memcpy(g_pool + g_pool_used, v, n);
  g_pool_used += n;
  return p;
}

static int set_not_zero(const char *v) { return v && *v && strcmp(v, "0") != 0; }

static const char *env_first(const char *const *names) {
  for (; *names; names++) {
    const char *v = getenv(*names);
    if (v && *v)
      return v;
  }
  return NULL;
}

static int env_int(const char *const *names, int dflt) {
  const char *v = env_first(names);
  char *end = NULL;
  long x = v ? strtol(v, &end, 10) : 0;
  /* Not a number, or out of int's range (atoi's undefined case): not set. */
  return v && end != v && !*end && x >= INT_MIN && x <= INT_MAX ? (int)x : dflt;
}

static int hexval(int c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* LOCKSTEP_JOB_SECRET: 32 hex digits, or not set at all. */
static void read_secret(void) {
  const char *s = getenv("LOCKSTEP_JOB_SECRET");
  if (!s || strlen(s) != 32)
    return;
  uint64_t k[2] = {0, 0};
  for (int i = 0; i < 32; i++) {
    int v = hexval((unsigned char)s[i]);
    if (v < 0)
      return;
    k[i / 16] = k[i / 16] << 4 | (uint64_t)v;
  }
  ls_cfg.secret[0] = k[0];
  ls_cfg.secret[1] = k[1];
  ls_cfg.have_secret = 1;
}

static void read_online(void) {
  const char *v = getenv("LOCKSTEP_ONLINE");
  ls_cfg.online_off = v && !strcmp(v, "0");
  const char *d = getenv("LOCKSTEP_ONLINE_DIR");
  ls_cfg.online_dir = d && *d ? keep(d) : NULL;
  const char *x = getenv("LOCKSTEP_ONLINE_CROSSHOST");
  ls_cfg.online_crosshost = !(x && !strcmp(x, "0"));
  const char *dp = getenv("LOCKSTEP_ONLINE_DIR_POLL_MS");
  ls_cfg.online_dir_poll_ns = 50000000ull;
  if (dp && *dp) {
    unsigned long ms = strtoul(dp, NULL, 10);
    ls_cfg.online_dir_poll_ns = (ms < 10 ? 10 : ms > 10000 ? 10000 : ms) * 1000000ull;
  }
  const char *o = getenv("LOCKSTEP_ONLINE_HOST");
  ls_cfg.online_host = o && *o ? keep(o) : NULL;
  read_secret();
  const char *sk = getenv("LOCKSTEP_SKIP_MS");
  ls_cfg.skip_ns = sk && *sk ? (uint64_t)strtoull(sk, NULL, 10) * 1000000ull : 500000000ull;
  const char *ts = getenv("LOCKSTEP_ONLINE_TIMESTAMPS");
  ls_cfg.online_timestamps = ts && !strcmp(ts, "1");
  const char *sv = getenv("LOCKSTEP_ONLINE_STATS");
  ls_cfg.online_stats = sv && !strcmp(sv, "1");
}

static void read_launcher(void) {
  static const char *const rank_env[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                         "PMIX_RANK", "SLURM_PROCID", NULL};
  static const char *const size_env[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                         "SLURM_NTASKS", NULL};
  ls_cfg.launcher_rank = env_int(rank_env, -1);
  ls_cfg.launcher_size = env_int(size_env, -1);
  /* What the ranks of one run share and other runs do not (the channel's job key). */
  static const char *const ids[LS_CFG_JOB_IDS] = {
      "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid", "SLURM_JOB_ID",
      "SLURM_STEP_ID",  "TORCHELASTIC_RUN_ID",     "MASTER_ADDR",             "MASTER_PORT"};
  for (unsigned i = 0; i < LS_CFG_JOB_IDS; i++)
    ls_cfg.job_ids[i] = keep(getenv(ids[i]));
}

void ls_config_read(void) {
  static int done;
  if (done)
    return;
  done = 1;
  ls_cfg.disable = set_not_zero(getenv("LOCKSTEP_DISABLE"));
  if (ls_cfg.disable)
    return; /* nothing else is looked at */
  const char *dir = getenv("LOCKSTEP_TRACE_DIR");
  ls_cfg.trace_dir = dir && *dir ? keep(dir) : "lockstep-traces";
  const char *capv = getenv("LOCKSTEP_TRACE_CAPACITY");
  uint64_t cap = capv && *capv ? strtoull(capv, NULL, 0) : LS_DEFAULT_CAPACITY;
  ls_cfg.capacity = cap < 16 ? 16 : cap > (1ull << 28) ? 1ull << 28 : cap;
  ls_cfg.ring = set_not_zero(getenv("LOCKSTEP_TRACE_RING"));
  if (ls_cfg.ring) /* whole pages of records (64 * 192 bytes = 3 pages) */
    ls_cfg.capacity = (ls_cfg.capacity + 63) / 64 * 64;
  ls_cfg.record_queries = set_not_zero(getenv("LOCKSTEP_RECORD_QUERIES"));
  const char *t = getenv("LOCKSTEP_TIMEOUT");
  double sec = t && *t ? strtod(t, NULL) : 60.0;
  /* 1e30 or inf would overflow the cast (undefined): cap at about 30 years. */
  ls_cfg.timeout_ns = sec > 0 ? (uint64_t)((sec < 1e9 ? sec : 1e9) * 1e9) : 0;
  const char *p = getenv("LOCKSTEP_POLICY");
  ls_cfg.policy = LS_POLICY_REPORT;
  if (p && !strcmp(p, "abort"))
    ls_cfg.policy = LS_POLICY_ABORT;
  else if (p && !strcmp(p, "exit"))
    ls_cfg.policy = LS_POLICY_EXIT;
  else if (p && !strcmp(p, "end"))
    ls_cfg.policy = LS_POLICY_END;
  const char *pm = getenv("LOCKSTEP_POLL_MS");
  unsigned long pmv = pm && *pm ? strtoul(pm, NULL, 10) : 10;
  ls_cfg.poll_ms = pmv > 60000 ? 60000 : pmv == 0 ? 1 : (unsigned)pmv;
  const char *d = getenv("LOCKSTEP_DEFER_US");
  unsigned long us = d && *d ? strtoul(d, NULL, 10) : 0;
  ls_cfg.defer_ns = (uint64_t)(us > 1000000 ? 1000000 : us) * 1000u;
  const char *dv = getenv("LOCKSTEP_DEVICE");
  ls_cfg.device_off = dv && !strcmp(dv, "0");
  const char *st = getenv("LOCKSTEP_DEVICE_STATS");
  ls_cfg.device_stats = st && *st == '1';
  const char *m = getenv("LOCKSTEP_MPI");
  ls_cfg.mpi_off = m && !strcmp(m, "0");
  const char *on = getenv("LOCKSTEP_INDEX");
  ls_cfg.index_off = on && !strcmp(on, "0");
  const char *kv = getenv("LOCKSTEP_INDEX_BLOCK");
  long k = kv && *kv ? strtol(kv, NULL, 10) : LS_INDEX_BLOCK;
  ls_cfg.index_block = k >= 2 && k <= (1 << 20) ? (uint32_t)k : LS_INDEX_BLOCK;
  const char *col = getenv("LOCKSTEP_TEST_INDEX_COLLIDE");
  if (col && (!strncmp(col, "local:", 6) || !strncmp(col, "chain:", 6))) {
    ls_cfg.test_index_collide = col[0] == 'l' ? 1 : 2;
    ls_cfg.test_index_collide_seq = strtoull(col + 6, NULL, 10);
  }
  read_online();
  read_launcher();
}
