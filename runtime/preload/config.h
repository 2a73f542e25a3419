/* config.h — liblockstep's settings, read from the environment once per process (at the
 * first interposed call, before anything else starts) into one struct every subsystem
 * reads. A value that does not parse keeps the default, silently, as each variable's
 * entry in runtime/README.md says. A forked child keeps its parent's settings.
 * Non-goals: NCCL_COMM_BLOCKING (NCCL's own variable, read where NCCL's default is
 * mirrored, nccl_hooks.c) and the `lockstep` tools' variables. */
#ifndef LOCKSTEP_PRELOAD_CONFIG_H
#define LOCKSTEP_PRELOAD_CONFIG_H

#include <stdint.h>

#include "recorder.h"

/* What happens when the watchdog finds a hang or the online check a divergence
 * (LOCKSTEP_POLICY). end: report, until both signals agree that the ranks can no longer
 * meet (the side channel reported a divergence, and the watchdog found a call not
 * complete past the timeout, in either order); then the process exits with LS_END_CODE. */
enum ls_policy { LS_POLICY_REPORT = 0, LS_POLICY_ABORT = 1, LS_POLICY_EXIT = 2, LS_POLICY_END = 3 };

#define LS_CFG_JOB_IDS 8 /* launcher variables naming one job run (job_ids below) */

struct ls_config {
  int disable;           /* LOCKSTEP_DISABLE: set and not "0" */
  const char *trace_dir; /* LOCKSTEP_TRACE_DIR, "lockstep-traces" when unset or empty */
  uint64_t capacity;     /* LOCKSTEP_TRACE_CAPACITY (records), 16 .. 2^28; a multiple of 64 with ring */
  int ring;              /* LOCKSTEP_TRACE_RING: set and not "0": the newest `capacity` calls kept */
  int record_queries;    /* LOCKSTEP_RECORD_QUERIES: set and not "0" */
  uint64_t timeout_ns;   /* LOCKSTEP_TIMEOUT (s, fractions allowed; 0: never) */
  int policy;            /* LOCKSTEP_POLICY: enum ls_policy */
  unsigned poll_ms;      /* LOCKSTEP_POLL_MS, 1 .. 60000 */
  uint64_t defer_ns;     /* LOCKSTEP_DEFER_US (0: an event per call), at most 1 s */
  int device_off;        /* LOCKSTEP_DEVICE=0: no device completion tracking */
  int device_stats;      /* LOCKSTEP_DEVICE_STATS starts with '1' */
  int mpi_off;           /* LOCKSTEP_MPI=0 */
  int index_off;         /* LOCKSTEP_INDEX=0 */
  uint32_t index_block;  /* LOCKSTEP_INDEX_BLOCK, 2 .. 2^20, else LS_INDEX_BLOCK */
  /* LOCKSTEP_TEST_INDEX_COLLIDE=local:SEQ|chain:SEQ (tests): 1 local, 2 chain, 0 none */
  int test_index_collide;
  uint64_t test_index_collide_seq;
  /* the side channel */
  int online_off;             /* LOCKSTEP_ONLINE=0 */
  const char *online_dir;     /* LOCKSTEP_ONLINE_DIR, NULL when unset or empty */
  int online_crosshost;       /* LOCKSTEP_ONLINE_CROSSHOST, 0 only when "0" */
  uint64_t online_dir_poll_ns; /* LOCKSTEP_ONLINE_DIR_POLL_MS, 10 .. 10000 ms */
  const char *online_host;    /* LOCKSTEP_ONLINE_HOST, NULL when unset or empty */
  int have_secret;            /* LOCKSTEP_JOB_SECRET is 32 hex digits: */
  uint64_t secret[2];         /*   its value */
  uint64_t skip_ns;           /* LOCKSTEP_SKIP_MS */
  int online_timestamps;      /* LOCKSTEP_ONLINE_TIMESTAMPS=1 */
  int online_stats;           /* LOCKSTEP_ONLINE_STATS=1 */
  /* the launcher's, for the trace header and the channel's job key */
  int launcher_rank, launcher_size; /* RANK, OMPI_COMM_WORLD_RANK, ... / WORLD_SIZE, ...; -1 */
  const char *job_ids[LS_CFG_JOB_IDS]; /* PMIX_NAMESPACE, SLURM_JOB_ID, ..., NULL when unset */
};
extern struct ls_config ls_cfg LS_HIDDEN;

/* Fills ls_cfg from the environment; only the first call of a process reads it. Called
 * under the recorder's init lock; everything else reads ls_cfg after initialization. */
LS_HIDDEN void ls_config_read(void);

#endif
