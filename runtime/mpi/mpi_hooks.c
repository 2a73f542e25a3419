/* mpi_hooks.c — what the PMPI wrappers do besides the generic record: fingerprints in
 * values that are equal across processes, communicator identities that every rank
 * derives alike, and completion of non-blocking collectives through MPI_Wait/Test.
 *
 * liblockstep does not link libmpi (a process without MPI must not load it): PMPI_*
 * and Open MPI's predefined handles are looked up with dlsym once, off the fast path.
 * Identities: MPI_COMM_WORLD and MPI_COMM_SELF (per rank) are fixed; a communicator
 * created by a call collective over its parent (split, dup, create, cart) hashes
 * (parent id, ordinal of the creation on the parent, parent rank of its rank 0), so
 * colors that yield disjoint groups get distinct ids without any communication; one
 * we did not see created (MPI_Comm_create_group, MPI_Comm_idup, unwrapped calls)
 * hashes its members' world ranks and the ordinal of that member set in this process.
 * Non-goals: intercommunicator semantics, persistent or partitioned requests. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_hooks.h"
#include "config.h"

#define MPI_SONAME LOCKSTEP_MPI_SONAME
#define LS_MPI_ABORT_CODE 86 /* MPI_Abort's code under policy abort: the watchdog's exit code */
#define LS_TLS __thread __attribute__((tls_model("initial-exec")))

__thread struct ls_mpi_scratch ls_mpi_tl __attribute__((tls_model("initial-exec")));

/* ---- PMPI entry points the hooks use, resolved once ----------------------------- */

#define REAL(var, name, type) ((type)ls_real_lookup(&(var), name, MPI_SONAME))
static void *volatile p_type_c2f, *volatile p_op_c2f, *volatile p_comm_size, *volatile p_comm_rank,
    *volatile p_comm_group, *volatile p_group_translate, *volatile p_group_free, *volatile p_abort,
    *volatile p_finalized;
typedef MPI_Fint (*type_c2f_fn)(MPI_Datatype);
typedef MPI_Fint (*op_c2f_fn)(MPI_Op);
typedef int (*comm_int_fn)(MPI_Comm, int *);
typedef int (*comm_group_fn)(MPI_Comm, MPI_Group *);
typedef int (*translate_fn)(MPI_Group, int, const int[], MPI_Group, int[]);
typedef int (*group_free_fn)(MPI_Group *);
typedef int (*abort_fn)(MPI_Comm, int);
typedef int (*finalized_fn)(int *);

#ifdef OPEN_MPI
/* Open MPI's predefined handles are addresses of globals inside libmpi. RTLD_DEFAULT,
 * not RTLD_NEXT: an executable that names MPI_COMM_WORLD may hold a copy-relocated
 * instance, and that copy is the one libmpi and the program use. */
static void *volatile p_world, *volatile p_self, *volatile p_null;
static MPI_Comm predefined(void *volatile *slot, const char *sym) {
  void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (!p) {
    p = dlsym(RTLD_DEFAULT, sym);
    __atomic_store_n(slot, p, __ATOMIC_RELEASE);
  }
  return (MPI_Comm)p;
}
static MPI_Comm world_comm(void) { return predefined(&p_world, "ompi_mpi_comm_world"); }
static MPI_Comm self_comm(void) { return predefined(&p_self, "ompi_mpi_comm_self"); }
static MPI_Comm null_comm(void) { return predefined(&p_null, "ompi_mpi_comm_null"); }
#else
static MPI_Comm world_comm(void) { return MPI_COMM_WORLD; }
static MPI_Comm self_comm(void) { return MPI_COMM_SELF; }
static MPI_Comm null_comm(void) { return MPI_COMM_NULL; }
#endif

static int comm_size(MPI_Comm h) {
  comm_int_fn f = REAL(p_comm_size, "PMPI_Comm_size", comm_int_fn);
  int s = -1;
  return f && f(h, &s) == MPI_SUCCESS ? s : -1;
}
static int comm_rank(MPI_Comm h) {
  comm_int_fn f = REAL(p_comm_rank, "PMPI_Comm_rank", comm_int_fn);
  int r = -1;
  return f && f(h, &r) == MPI_SUCCESS ? r : -1;
}
/* After MPI_Finalize no query may be made; the wrappers still pass calls through. */
static int mpi_finalized(void) {
  finalized_fn f = REAL(p_finalized, "PMPI_Finalized", finalized_fn);
  int done = 0;
  return f && f(&done) == MPI_SUCCESS && done;
}

/* Rank `r` of `from` as a rank of `to`; MPI_UNDEFINED when not a member. */
static int translate_rank(MPI_Comm from, int r, MPI_Comm to) {
  comm_group_fn cg = REAL(p_comm_group, "PMPI_Comm_group", comm_group_fn);
  translate_fn tr = REAL(p_group_translate, "PMPI_Group_translate_ranks", translate_fn);
  group_free_fn gf = REAL(p_group_free, "PMPI_Group_free", group_free_fn);
  MPI_Group gf_from, gf_to;
  int out = MPI_UNDEFINED;
  if (!cg || !tr || !gf || cg(from, &gf_from) != MPI_SUCCESS)
    return out;
  if (cg(to, &gf_to) == MPI_SUCCESS) {
    tr(gf_from, 1, &r, gf_to, &out);
    gf(&gf_to);
  }
  gf(&gf_from);
  return out;
}

static void mpi_rank_query(const void *handle, int *rank, int *size) {
  MPI_Comm h = (MPI_Comm)(uintptr_t)handle;
  if (h == null_comm() || mpi_finalized())
    return;
  *rank = comm_rank(h);
  *size = comm_size(h);
}

static int mpi_abort_comm(const void *handle) {
  abort_fn f = REAL(p_abort, "PMPI_Abort", abort_fn);
  return f ? f((MPI_Comm)(uintptr_t)handle, LS_MPI_ABORT_CODE) : -1;
}

static void mpi_init(void) {
  ls_set_abort_hook(LS_FAMILY_MPI, mpi_abort_comm);
  ls_set_rank_query_hook(LS_FAMILY_MPI, mpi_rank_query);
}

static void mpi_after_fork(void);
static const struct ls_subsystem g_mpi = {
    .name = "mpi", .order = LS_ORDER_MPI, .init = mpi_init, .after_fork = mpi_after_fork};
__attribute__((constructor)) static void mpi_register(void) { ls_subsystem_register(&g_mpi); }

/* ---- communicator identity ---------------------------------------------------- */

#define SALT_WORLD 0x574f524c44ull
#define SALT_SELF 0x53454c46ull
#define SALT_DERIVED 0x4445524956ull
#define SALT_MEMBERS 0x4d454d42ull

static pthread_mutex_t g_members_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { uint64_t hash, count; } g_members[256]; /* ordinal per member set */

/* A lock another thread held at fork time stays held in the child for good. */
static void mpi_after_fork(void) { pthread_mutex_init(&g_members_lock, NULL); }

static struct ls_comm *register_comm(MPI_Comm h, uint64_t id) {
  return ls_comm_register(LS_FAMILY_MPI, (const void *)h, id, comm_rank(h), comm_size(h));
}

/* The members' world ranks, in comm rank order, and how many communicators with that
 * member set this process adopted before. Not hot: once per communicator. */
static uint64_t membership_id(MPI_Comm h) {
  int n = comm_size(h);
  uint64_t hash = ls_hash_u64(SALT_MEMBERS, (uint64_t)n);
  comm_group_fn cg = REAL(p_comm_group, "PMPI_Comm_group", comm_group_fn);
  translate_fn tr = REAL(p_group_translate, "PMPI_Group_translate_ranks", translate_fn);
  group_free_fn gf = REAL(p_group_free, "PMPI_Group_free", group_free_fn);
  int *in = n > 0 ? malloc(2 * (size_t)n * sizeof(int)) : NULL;
  MPI_Group g, wg;
  if (in && cg && tr && gf && cg(h, &g) == MPI_SUCCESS) {
    if (cg(world_comm(), &wg) == MPI_SUCCESS) {
      for (int i = 0; i < n; i++)
        in[i] = i;
      if (tr(g, n, in, wg, in + n) == MPI_SUCCESS)
        hash = ls_hash_bytes(hash, in + n, (uint64_t)n * sizeof(int));
      gf(&wg);
    }
    gf(&g);
  }
  free(in);
  uint64_t ordinal = 0;
  pthread_mutex_lock(&g_members_lock);
  for (unsigned i = 0; i < sizeof g_members / sizeof g_members[0]; i++)
    if (g_members[i].hash == hash || g_members[i].hash == 0) {
      g_members[i].hash = hash;
      ordinal = g_members[i].count++;
      break;
    }
  pthread_mutex_unlock(&g_members_lock);
  return ls_hash_u64(hash, ordinal);
}

/* The recorder's communicator for handle `h`, adopting one we did not see created.
 * NULL for MPI_COMM_NULL (the call will fail; it gets no sequence number). */
static struct ls_comm *mpi_comm(MPI_Comm h) {
  struct ls_comm *cm = ls_comm_lookup((const void *)h);
  if (cm)
    return cm;
  if (h == null_comm() || mpi_finalized())
    return NULL;
  if (h == world_comm())
    return register_comm(h, ls_hash_u64(SALT_WORLD, 0));
  if (h == self_comm())
    return register_comm(h, ls_hash_u64(SALT_SELF, (uint64_t)comm_rank(world_comm())));
  return register_comm(h, membership_id(h));
}

/* ---- requests of non-blocking collectives --------------------------------------- */

/* Open addressing, lock-free: a request is inserted by the thread that started the
 * collective and removed by the one that completes it; MPI forbids completing one
 * request twice, so one key never races with itself. But a handle is an address that
 * MPI reuses as soon as its wait returns: between thread A's MPI_Wait and A's removal
 * of the entry, thread B can start a collective that gets the same handle (its entry
 * goes to a later slot) and wait on it, and B's lookup would find A's entry first. So
 * a wait claims the entries it looks up (REQ_CLAIMED in the value), a lookup passes
 * claimed ones by, and a wait that did not complete an entry gives it back. */
#define REQ_SLOTS 4096u
#define REQ_TOMB ((uintptr_t)1)
static uintptr_t g_req_key[REQ_SLOTS];
static uint64_t g_req_val[REQ_SLOTS]; /* record index + 1, | REQ_CLAIMED while waited on */
#define REQ_CLAIMED (1ull << 63)

static unsigned req_slot0(uintptr_t k) {
  uint64_t z = (uint64_t)k * 0x9e3779b97f4a7c15ull;
  return (unsigned)(z >> 52) & (REQ_SLOTS - 1);
}

static void req_insert(uintptr_t k, uint64_t index) {
  if (k == 0 || k == REQ_TOMB)
    return;
  unsigned s = req_slot0(k);
  for (unsigned p = 0; p < REQ_SLOTS; p++, s = (s + 1) & (REQ_SLOTS - 1)) {
    uintptr_t cur = __atomic_load_n(&g_req_key[s], __ATOMIC_ACQUIRE);
    if ((cur == 0 || cur == REQ_TOMB) &&
        __atomic_compare_exchange_n(&g_req_key[s], &cur, k, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      __atomic_store_n(&g_req_val[s], index + 1, __ATOMIC_RELEASE);
      return;
    }
  }
  /* Full: the collective stays pending and the watchdog will report it; a trace that
   * says "not completed" is better than a lock on this path. */
}

/* Slot of request `k`, claimed for the calling wait, or -1. */
static int req_claim(uintptr_t k) {
  if (k == 0 || k == REQ_TOMB)
    return -1;
  unsigned s = req_slot0(k);
  for (unsigned p = 0; p < REQ_SLOTS; p++, s = (s + 1) & (REQ_SLOTS - 1)) {
    uintptr_t cur = __atomic_load_n(&g_req_key[s], __ATOMIC_ACQUIRE);
    if (cur == 0)
      return -1;
    uint64_t v = cur == k ? __atomic_load_n(&g_req_val[s], __ATOMIC_ACQUIRE) : 0;
    if (v && !(v & REQ_CLAIMED) &&
        __atomic_compare_exchange_n(&g_req_val[s], &v, v | REQ_CLAIMED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return (int)s;
  }
  return -1;
}

/* The record index of a claimed slot */
static uint64_t req_index(int slot) { return (__atomic_load_n(&g_req_val[slot], __ATOMIC_ACQUIRE) & ~REQ_CLAIMED) - 1; }

static void req_unclaim(int slot) { __atomic_fetch_and(&g_req_val[slot], ~REQ_CLAIMED, __ATOMIC_ACQ_REL); }

static void req_complete(int slot) {
  uint64_t v = __atomic_exchange_n(&g_req_val[slot], 0, __ATOMIC_ACQ_REL) & ~REQ_CLAIMED;
  __atomic_store_n(&g_req_key[slot], REQ_TOMB, __ATOMIC_RELEASE);
  if (v)
    ls_rec_complete(v - 1);
}

static int g_live_reqs; /* atomic: tracked requests; 0 lets waits skip the table */

/* Tracked requests among the arguments of one wait-family call (thread scratch). */
#define MAX_TRACKED 64
struct tracked {
  int pos, slot;
};
static LS_TLS struct tracked tl_tracked_small[MAX_TRACKED];
/* Points at tl_tracked_small, or at a heap array for a wait on more collectives than
 * that (freed when the call returns): a request left out would time out falsely. */
static LS_TLS struct tracked *tl_tracked;
static LS_TLS int tl_ntracked;

/* ---- blocking calls without a sequence number ------------------------------------ */

/* MPI_Finalize and the creation calls wait for other ranks like a collective without a
 * sequence number: the recorder's watchdog watches them (ls_watch_begin), and under
 * policy abort aborts MPI_COMM_WORLD. */
static LS_TLS int tl_watch_slot = -1;

static void watch_begin(struct ls_call *c, const char *what) {
  tl_watch_slot = -1;
  if (!c->rec || !ls_cfg.timeout_ns)
    return;
  tl_watch_slot = ls_watch_begin(c, what, comm_rank(world_comm()), (const void *)world_comm());
}

static void watch_end(void) {
  ls_watch_end(tl_watch_slot);
  tl_watch_slot = -1;
}

/* ---- hooks ---------------------------------------------------------------------- */

static int64_t dtype_of(int64_t handle) {
  if (handle == LS_NO_VALUE)
    return LS_NO_VALUE;
  type_c2f_fn f = REAL(p_type_c2f, "PMPI_Type_c2f", type_c2f_fn);
  return f ? (int64_t)f((MPI_Datatype)(intptr_t)handle) : LS_NO_VALUE;
}
static int64_t redop_of(int64_t handle) {
  if (handle == LS_NO_VALUE)
    return LS_NO_VALUE;
  op_c2f_fn f = REAL(p_op_c2f, "PMPI_Op_c2f", op_c2f_fn);
  return f ? (int64_t)f((MPI_Op)(intptr_t)handle) : LS_NO_VALUE;
}

/* Binds the call to its communicator; with none (MPI_COMM_NULL), makes sure the
 * recorder does not adopt the handle either. */
static void bind_comm(struct ls_call *c) {
  c->comm = mpi_comm((MPI_Comm)(uintptr_t)c->args.comm);
  if (!c->comm)
    c->args.comm = NULL;
}

static void pre_collective(struct ls_call *c) {
  bind_comm(c);
  c->args.dtype = dtype_of(c->args.dtype);
  c->args.redop = redop_of(c->args.redop);
  if (ls_mpi_tl.counts && c->comm) {
    int n = comm_size((MPI_Comm)(uintptr_t)c->args.comm);
    int64_t sum = 0;
    for (int i = 0; i < n; i++)
      sum += ls_mpi_tl.counts[i];
    c->args.count = sum;
  }
  ls_call_enter(c);
  if (c->rec && c->args.request) /* completes in the wait family, not on return */
    __atomic_fetch_or(&c->rec->flags, (uint16_t)LS_REC_NONBLOCKING, __ATOMIC_RELEASE);
}

static void pre_create(struct ls_call *c) {
  struct ls_comm *parent = mpi_comm((MPI_Comm)(uintptr_t)c->args.comm);
  if (!parent)
    c->args.comm = NULL;
  c->comm = parent;
  c->aux0 = ls_comm_id(parent);
  c->aux1 = c->sub == LS_SUB_NONE
                ? (uint64_t)(uint32_t)c->args.color | ((uint64_t)(uint32_t)c->args.key << 32)
                : 0;
  /* Only a creation every rank of the parent takes part in may use the parent's
   * ordinal; MPI_Comm_create_group is called by the group's members alone. */
  c->h0 = c->sub == LS_SUB_CREATE_GROUP ? 0 : ls_comm_next_split(parent);
  ls_call_enter(c);
  if (c->rec) { /* the record describes the new communicator; the parent is aux0 */
    c->rec->comm_id = 0;
    c->rec->comm_rank = c->rec->comm_size = -1;
  }
  if (!c->args.request) /* MPI_Comm_idup returns at once */
    watch_begin(c, "communicator creation");
}

static void post_create(struct ls_call *c, int64_t rc) {
  MPI_Comm h = rc == MPI_SUCCESS && c->args.out_comm ? *(MPI_Comm *)c->args.out_comm : null_comm();
  /* MPI_Comm_idup's handle is usable only once its request completes: adopt it then. */
  if (h == null_comm() || c->args.request)
    return;
  uint64_t id;
  if (c->sub == LS_SUB_CREATE_GROUP || !c->comm) {
    id = membership_id(h);
  } else {
    int leader = translate_rank(h, 0, (MPI_Comm)(uintptr_t)c->args.comm);
    uint64_t base = ls_hash_u64(ls_hash_u64(c->aux0, c->h0), (uint64_t)(uint32_t)leader);
    id = ls_hash_u64(base, SALT_DERIVED);
  }
  struct ls_comm *cm = register_comm(h, id);
  if (c->rec && cm) {
    c->rec->comm_id = id;
    c->rec->comm_rank = comm_rank(h);
    c->rec->comm_size = comm_size(h);
  }
}

/* Which of this call's requests are collectives' (before the call resets them). */
static void pre_wait(struct ls_call *c) {
  tl_ntracked = 0;
  tl_tracked = tl_tracked_small;
  if (!__atomic_load_n(&g_live_reqs, __ATOMIC_ACQUIRE))
    return;
  if (c->args.request) {
    int s = req_claim((uintptr_t) * (MPI_Request *)(intptr_t)c->args.request);
    if (s >= 0) {
      tl_tracked[0].pos = 0;
      tl_tracked[0].slot = s;
      tl_ntracked = 1;
    }
  } else if (ls_mpi_tl.reqs) {
    int cap = MAX_TRACKED;
    for (int i = 0; i < ls_mpi_tl.nreqs; i++) {
      int s = req_claim((uintptr_t)ls_mpi_tl.reqs[i]);
      if (s < 0)
        continue;
      if (tl_ntracked == cap) {
        struct tracked *big = malloc((size_t)ls_mpi_tl.nreqs * sizeof *big);
        if (!big) {
          req_unclaim(s); /* untracked: left pending for a later wait */
          break;
        }
        memcpy(big, tl_tracked, (size_t)tl_ntracked * sizeof *big);
        tl_tracked = big;
        cap = ls_mpi_tl.nreqs;
      }
      tl_tracked[tl_ntracked].pos = i;
      tl_tracked[tl_ntracked].slot = s;
      tl_ntracked++;
    }
  }
  /* A blocking wait on a collective is recorded (a hang there is visible in the
   * trace); polling (the Test family, flag out-parameter) is not, or a spin loop
   * would fill the trace. */
  if (tl_ntracked && !ls_mpi_tl.out_flag) {
    c->aux0 = req_index(tl_tracked[0].slot);
    c->aux1 = (uint64_t)tl_ntracked;
    ls_call_enter(c);
  }
}

static void complete_pos(int pos) {
  for (int k = 0; k < tl_ntracked; k++)
    if (tl_tracked[k].pos == pos && tl_tracked[k].slot >= 0) {
      req_complete(tl_tracked[k].slot);
      tl_tracked[k].slot = -1;
      __atomic_fetch_sub(&g_live_reqs, 1, __ATOMIC_RELEASE);
    }
}

static void post_wait_done(struct ls_call *c, int64_t rc) {
  if (!tl_ntracked)
    return;
  /* MPI_ERR_IN_STATUS: some requests may still be pending; leave them all to a
   * later wait rather than guess from statuses the caller may have ignored. */
  if (rc == MPI_ERR_IN_STATUS)
    return;
  struct ls_mpi_scratch *s = &ls_mpi_tl;
  if (s->out_indices && s->out_count) { /* Waitsome/Testsome */
    if (*s->out_count == MPI_UNDEFINED)
      return;
    for (int i = 0; i < *s->out_count; i++)
      complete_pos(s->out_indices[i]);
  } else if (s->out_index) { /* Waitany/Testany */
    if ((!s->out_flag || *s->out_flag) && *s->out_index != MPI_UNDEFINED)
      complete_pos(*s->out_index);
  } else if (!s->out_flag || *s->out_flag) { /* Wait, Waitall, Test, Testall, Request_free */
    for (int k = 0; k < tl_ntracked; k++)
      if (tl_tracked[k].slot >= 0) {
        req_complete(tl_tracked[k].slot);
        tl_tracked[k].slot = -1;
        __atomic_fetch_sub(&g_live_reqs, 1, __ATOMIC_RELEASE);
      }
  }
  (void)c;
}

static void post_wait(struct ls_call *c, int64_t rc) {
  post_wait_done(c, rc);
  for (int k = 0; k < tl_ntracked; k++) /* still pending (a Test that said no, Waitany's others) */
    if (tl_tracked[k].slot >= 0)
      req_unclaim(tl_tracked[k].slot);
  if (tl_tracked != tl_tracked_small)
    free(tl_tracked);
  tl_tracked = tl_tracked_small;
  tl_ntracked = 0;
}

void ls_mpi_pre(struct ls_call *c) {
  if (ls_cfg.mpi_off) /* MPI calls pass through unrecorded */
    return;
  switch (c->kind) {
  case LS_KIND_COLLECTIVE:
  case LS_KIND_P2P:
    pre_collective(c);
    break;
  case LS_KIND_COMM_SPLIT:
    pre_create(c);
    break;
  case LS_KIND_WAIT:
    pre_wait(c);
    break;
  case LS_KIND_RANK_QUERY:
  case LS_KIND_SIZE_QUERY:
    break; /* frequent and carry nothing the comparison needs: no record */
  case LS_KIND_COMM_DESTROY:
    c->comm = ls_mpi_tl.inout_comm ? ls_comm_lookup((const void *)*ls_mpi_tl.inout_comm) : NULL;
    ls_call_enter(c);
    break;
  case LS_KIND_COMM_FINALIZE:
    ls_call_enter(c);
    watch_begin(c, "MPI_Finalize");
    break;
  default:
    if (c->args.comm)
      bind_comm(c);
    ls_call_enter(c);
    break;
  }
}

void ls_mpi_post(struct ls_call *c, int64_t rc) {
  if (ls_cfg.mpi_off) {
    memset(&ls_mpi_tl, 0, sizeof ls_mpi_tl);
    ls_call_exit(c, rc);
    return;
  }
  switch (c->kind) {
  case LS_KIND_COLLECTIVE:
  case LS_KIND_P2P:
    if (c->args.request && rc == MPI_SUCCESS && c->rec) {
      uintptr_t req = (uintptr_t) * (MPI_Request *)(intptr_t)c->args.request;
      c->rec->aux0 = (uint64_t)req;
      __atomic_fetch_add(&g_live_reqs, 1, __ATOMIC_RELEASE);
      req_insert(req, c->index);
    }
    break;
  case LS_KIND_COMM_SPLIT:
    watch_end();
    post_create(c, rc);
    break;
  case LS_KIND_COMM_FINALIZE:
    watch_end();
    break;
  case LS_KIND_WAIT:
    post_wait(c, rc);
    break;
  case LS_KIND_COMM_INIT:
    if (rc == MPI_SUCCESS) { /* name the predefined communicators now, while cheap */
      mpi_comm(world_comm());
      mpi_comm(self_comm());
      ls_modules_refresh();
    }
    break;
  case LS_KIND_COMM_DESTROY:
    if (rc == MPI_SUCCESS)
      ls_comm_mark_dead(c->comm);
    break;
  default:
    break;
  }
  memset(&ls_mpi_tl, 0, sizeof ls_mpi_tl);
  ls_call_exit(c, rc);
}
