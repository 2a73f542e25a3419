/* online/online.h — what the side channel's files share: the message formats (shared
 * file rows and log records), the per-communicator state, the channel's settings and
 * keys, and the functions one file of the channel calls in another. Private to
 * runtime/preload/online/: the core knows the channel only as a subsystem (channel.c).
 *
 * Who does what (every function runs on the watchdog thread or in the exit handler,
 * under ls_on.lock, except lockstep_online_set_enabled, which takes the lock itself):
 *   channel.c  set-up (keys, directory, host), the publisher's walk of the trace,
 *              exit and fork
 *   shm.c      same host: one mapped file per communicator
 *   log.c      across hosts: one append-only log per rank
 *   check.c    comparing fingerprints, skip vs slow, the report lines
 *   pause.c    lockstep_online_set_enabled and its pause points
 *   siphash.c  SipHash-2-4 and the MAC every message carries */
#ifndef LOCKSTEP_ONLINE_H
#define LOCKSTEP_ONLINE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "fingerprint.h"

#define LS_FP_SLOTS 1024u
#define LS_FP_MAGIC 0x32504650534cull /* "LSPFP2" */
#define LS_FP_VERSION 3u /* 3: api is 32 bits, followed by `paused` */
#define LS_ONLINE_COMMS 64u
#define LS_ONLINE_PEERS 16u
#define LS_HDR_PAGE 4096u
#define LS_DIR_PEERS 2u        /* remote peers read per communicator (r+1 always one) */
#define LS_DIR_BATCH 512u      /* log records buffered between two appends */
#define LS_DIR_READ 2048u      /* log records read per peer per poll */
#define LS_DIR_MAGIC 0x5244534cu /* "LSDR" */
#define LS_DIR_NOTSEEN_NS 10000000000ull

struct ls_fp { /* 96 bytes */
  uint64_t tag; /* collective index + 1 once published; 0 while written or empty */
  uint64_t seq; /* the call's seq in the trace (collectives and send/recv numbered) */
  uint64_t count;
  uint64_t index;    /* the publisher's trace record index */
  uint64_t site_off; /* call site: offset in `module` */
  uint32_t api;      /* the api id (same library build on every rank of a job) */
  /* Collectives of the publisher on this communicator issued before this one while
   * its check was paused (not numbered): two ranks' k-th fingerprints are the same
   * call only when this is equal too. */
  uint32_t paused;
  int32_t dtype, redop, root_or_peer;
  uint16_t op_class, kind;
  char module[24]; /* basename of the call site's module */
  uint64_t mac;
};

#define ST_IDLE 1u       /* nothing pending in the publisher */
#define ST_EXITED 2u     /* the publisher has exited (or finalized) */
#define ST_OTHER_AFTER 4u /* it issued sequenced calls elsewhere after its last one here */
struct ls_fp_status { /* 64 bytes */
  uint64_t gen;   /* odd while written */
  uint64_t ncoll; /* collectives issued on this communicator */
  uint64_t t_update;
  int32_t pid;
  uint32_t flags;
  uint64_t pad[3];
  uint64_t mac;
};

struct ls_fp_header {
  uint64_t magic;
  uint32_t version;
  int32_t size;
  uint64_t comm_id;
  uint64_t apis; /* hash of the creator's api table: a file of another build is not used */
  uint64_t mac;
};

_Static_assert(sizeof(struct ls_fp) == 96, "fp size");
_Static_assert(sizeof(struct ls_fp_status) == 64, "status size");

#define ROW_SIZE (sizeof(struct ls_fp_status) + LS_FP_SLOTS * sizeof(struct ls_fp))

/* One record of a rank's log (the cross-host transport). */
enum { DR_HELLO = 1, DR_FP = 2, DR_STATUS = 3 };
struct ls_dir_hello {
  uint64_t host; /* the writer's host key */
  uint64_t comm;
  uint64_t apis;
  int32_t size, rank;
  char name[64]; /* its host name, for messages */
};
struct ls_dir_rec { /* 128 bytes */
  uint32_t magic;
  uint16_t type, version;
  uint64_t n; /* record number in the log, from 0: a record cannot be moved or replayed */
  union {
    struct ls_fp fp;         /* its own mac unused: the record's covers it */
    struct ls_fp_status st;
    struct ls_dir_hello hello;
  } u;
  uint64_t pad;
  uint64_t mac;
};
_Static_assert(sizeof(struct ls_dir_rec) == 128, "dir record size");

/* A peer whose fingerprints come from its log. */
struct ls_remote {
  /* 0 not seen yet, 1 remote (read), 2 same host, 3 remote (not read), -1 rejected */
  int state;
  uint64_t off;     /* bytes of its log consumed */
  uint64_t nrec;    /* records consumed */
  uint64_t nfp;     /* fingerprints received */
  uint64_t t_probe; /* last look at its log */
  uint64_t t_bad;   /* since when the next record fails validation (0: it does not) */
  int have_st;
  struct ls_fp_status st;
  char host[64];
  struct ls_fp *ring; /* LS_FP_SLOTS, by fingerprint index (state 1) */
};

struct ls_online_comm {
  uint64_t id;
  int rank, size;
  void *map;
  size_t map_size;
  char path[640];
  uint64_t ncoll;                    /* collectives published so far */
  uint64_t last_index;               /* trace index of the last one */
  uint32_t st_flags;                 /* last status published */
  uint64_t checked[LS_ONLINE_PEERS]; /* per peer: next collective index to compare */
  uint64_t bad_peers;                /* peers whose messages were rejected (bit per peer slot) */
  uint64_t apart;                    /* peers that paused at other calls (bit per peer slot) */
  uint64_t paused;                   /* collectives not published: the check was paused */
  int reported;                      /* a mismatch or skip was reported */
  int slow_noted;
  /* across hosts */
  int dir_pub;                          /* our log: 1 written, 0 not needed, -1 failed */
  int dir_decided;
  struct ls_dir_rec *dbuf;              /* LS_DIR_BATCH records waiting for the next append */
  unsigned dn;
  uint64_t dseq;                        /* records appended to our log */
  uint64_t d_ncoll;                     /* progress and flags of the last status logged */
  uint32_t d_flags;
  int d_logged;
  uint64_t t_dir, t_first;              /* last log I/O; first publish */
  struct ls_remote *rem[LS_ONLINE_PEERS]; /* per peer slot, once it is not on our file */
  unsigned nread;                       /* remote peers read (state 1) */
  char log[640];
};

/* The channel's state shared by its files (each file keeps the rest to itself). */
struct ls_online_state {
  pthread_mutex_t lock; /* the watchdog's tick, the exit handler, the pause API */
  int state;            /* 0 not set up yet, 1 on, -1 off */
  struct ls_online_comm comms[LS_ONLINE_COMMS];
  unsigned ncomms;
  uint64_t job;         /* key shared by the ranks of one job run (channel.c, job_key) */
  uint64_t apis;        /* hash of the api table: ranks must number apis alike */
  uint64_t key[2];      /* the MAC key */
  uint64_t host;        /* host key: ranks with the same key share the mapped file */
  char dir[480];
  int dir_ours;         /* the default <trace dir>/online: removed by the last one out */
  int noticed;          /* "online check off" said */
};
extern struct ls_online_state ls_on LS_HIDDEN;

/* siphash.c */
LS_HIDDEN uint64_t ls_siphash(const uint64_t k[2], const void *data, size_t len);
/* MAC of a message (all but its trailing mac field) under ls_on.key, bound to
 * communicator and rank (-1: the file header) so a valid message cannot be replayed as
 * another rank's or another communicator's. */
LS_HIDDEN uint64_t ls_on_mac(const void *msg, size_t size, uint64_t comm, int rank);

/* channel.c */
/* Sets the channel up on first use (settings, keys); 1 while it is on. */
LS_HIDDEN int ls_on_enabled(void);
/* The channel directory, made or checked once; 0 (and the channel off) when unusable. */
LS_HIDDEN int ls_on_dir_ready(void);
/* Turns the channel off for this process with one line: "<why> <what>". */
LS_HIDDEN void ls_on_notice_off(const char *why, const char *what);
/* The id of the key in file names: a file of another run or secret is never opened. */
LS_HIDDEN uint64_t ls_on_key_id(void);
/* This rank's host name for messages (LOCKSTEP_ONLINE_HOST when set). */
LS_HIDDEN void ls_on_host_name(char *out, size_t cap);

/* shm.c */
/* The channel state of communicator `id`, its file mapped on first use; NULL when it
 * cannot be checked (one rank, too many communicators, no file). */
LS_HIDDEN struct ls_online_comm *ls_on_comm_for(uint64_t id, int rank, int size);
LS_HIDDEN struct ls_fp_status *ls_on_status_of(struct ls_online_comm *oc, int rank);
LS_HIDDEN struct ls_fp *ls_on_row(struct ls_online_comm *oc, int rank);
/* Publishes this rank's k-th fingerprint (f->tag = k + 1), seqlock-style. */
LS_HIDDEN void ls_on_shm_put_fp(struct ls_online_comm *oc, const struct ls_fp *f);
/* Publishes this rank's status v (v->gen: the next even generation). */
LS_HIDDEN void ls_on_shm_put_status(struct ls_online_comm *oc, const struct ls_fp_status *v);
/* A stable, authentic copy of peer p's slot idx: 1 ok, 0 not there (yet), 2 lapped,
 * -1 rejected. */
LS_HIDDEN int ls_on_read_fp(struct ls_online_comm *oc, int p, uint64_t idx, struct ls_fp *out);
/* Peer p's status: 1 ok, 0 not published, -1 rejected. */
LS_HIDDEN int ls_on_read_status(struct ls_online_comm *oc, int p, struct ls_fp_status *out);
/* The call this rank published as collective k: 1, or 0 when overwritten. */
LS_HIDDEN int ls_on_my_fp(struct ls_online_comm *oc, uint64_t k, struct ls_fp *out);

/* log.c */
LS_HIDDEN void ls_on_log_path(char *out, size_t cap, uint64_t comm, int q);
/* 1 while a rank this one compares with (either way) is not on this host's file. */
LS_HIDDEN int ls_on_window_absent(struct ls_online_comm *oc);
LS_HIDDEN void ls_on_log_fp(struct ls_online_comm *oc, const struct ls_fp *f);
LS_HIDDEN void ls_on_log_status(struct ls_online_comm *oc, const struct ls_fp_status *v);
LS_HIDDEN int ls_on_log_flush(struct ls_online_comm *oc); /* 0, or -1: the log failed */
LS_HIDDEN void ls_on_log_poll(struct ls_online_comm *oc, uint64_t now);
/* Collective idx of a peer read from its log: as ls_on_read_fp. */
LS_HIDDEN int ls_on_log_fp_of(const struct ls_remote *rm, uint64_t idx, struct ls_fp *out);
LS_HIDDEN void ls_on_log_reject(struct ls_online_comm *oc, unsigned slot, int p, const char *what);
/* 1 when rank s's log can go: s and every rank that reads it have exited. */
LS_HIDDEN int ls_on_log_done(struct ls_online_comm *oc, int s);

/* check.c */
LS_HIDDEN void ls_on_check(struct ls_online_comm *oc, uint64_t now);
/* Writes msg (n bytes of cap) to stderr, with a timestamp under LOCKSTEP_ONLINE_TIMESTAMPS. */
LS_HIDDEN void ls_on_say(char *msg, int n, size_t cap);
/* "rejected <what> from rank <from>" (from < 0: the file itself) about `path`. */
LS_HIDDEN void ls_on_reject_in(struct ls_online_comm *oc, const char *path, int from, const char *what);
static inline void ls_on_reject(struct ls_online_comm *oc, int from, const char *what) {
  ls_on_reject_in(oc, oc->path, from, what);
}

/* pause.c */
/* Whether the check is paused at trace index `index` (the publisher's walk, in order). */
LS_HIDDEN int ls_on_paused_at(uint64_t index);
LS_HIDDEN void ls_on_pause_after_fork(void);

static inline int ls_on_npeers(const struct ls_online_comm *oc) {
  return oc->size - 1 < (int)LS_ONLINE_PEERS ? oc->size - 1 : (int)LS_ONLINE_PEERS;
}

#endif
