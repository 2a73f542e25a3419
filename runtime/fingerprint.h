/* fingerprint.h — when two ranks' k-th calls on a communicator are one protocol instance,
 * and the name of every way a run can fail to be in lockstep. The recorder's online check
 * and `lockstep compare` both decide with ls_fp_diff, so the two halves name the same class
 * for the same calls; tests and READMEs take the class list from LS_CLASSES.
 * Dependency-free (stddef and stdint only): the preloaded library includes it. */
#ifndef LOCKSTEP_FINGERPRINT_H
#define LOCKSTEP_FINGERPRINT_H

#include <stddef.h>
#include <stdint.h>

/* Every divergence class, in the order compare's README lists them. X(ENUM, "name"). */
#define LS_CLASSES(X)                                                                                                  \
  X(OP_MISMATCH, "op-mismatch")                                                                                        \
  X(COUNT_MISMATCH, "count-mismatch")                                                                                  \
  X(DTYPE_MISMATCH, "dtype-mismatch")                                                                                  \
  X(ROOT_MISMATCH, "root-mismatch")                                                                                    \
  X(REDOP_MISMATCH, "redop-mismatch")                                                                                  \
  X(PEER_MISMATCH, "peer-mismatch")                                                                                    \
  X(SKIP, "skip")                                                                                                      \
  X(EXTRA_CALL, "extra-call")                                                                                          \
  X(API_ERROR, "api-error")                                                                                            \
  X(ASYNC_ERROR, "async-error")                                                                                        \
  X(INCOMPLETE, "incomplete")                                                                                          \
  X(TIMEOUT, "timeout")                                                                                                \
  X(NOT_READY, "not-ready")                                                                                            \
  X(AFTER_ABORT, "after-abort")                                                                                        \
  X(OVERWRITTEN, "overwritten")

enum ls_class {
  LS_CLASS_NONE = 0, /* the calls agree */
#define LS_CLASS_ENUM_(e, s) LS_CLASS_##e,
  LS_CLASSES(LS_CLASS_ENUM_)
#undef LS_CLASS_ENUM_
  LS_CLASS_COUNT
};

/* "op-mismatch" ...; NULL for LS_CLASS_NONE and out-of-range values. */
static inline const char *ls_class_name(enum ls_class c) {
  static const char *const names[] = {NULL,
#define LS_CLASS_NAME_(e, s) s,
                                      LS_CLASSES(LS_CLASS_NAME_)
#undef LS_CLASS_NAME_
  };
  return (unsigned)c < LS_CLASS_COUNT ? names[c] : NULL;
}

/* What a call must agree on besides its operation (DESIGN's F_k without the sequence,
 * which is the position both calls are taken at). kind is enum ls_api_kind's value:
 * only LS_KIND_P2P (2) matters, it makes root_or_peer a peer. */
struct ls_fp_fields {
  uint64_t count;
  int32_t dtype, redop, root_or_peer; /* LS_NO_VALUE (-1) when not applicable */
  uint16_t kind;
};

#define LS_FP_KIND_P2P 2u /* = LS_KIND_P2P (trace_format.h), without including it */

/* The first field in which two calls at one position differ, in DESIGN's order: op, count,
 * dtype, root (peer for send/recv), reduction op. same_op says whether their operations are
 * one protocol: each half decides that from what it has (the writer's op class; the rules'
 * op names), so it is passed in rather than compared here. LS_CLASS_NONE when they agree. */
static inline enum ls_class ls_fp_diff(int same_op, const struct ls_fp_fields *a, const struct ls_fp_fields *b) {
  if (!same_op)
    return LS_CLASS_OP_MISMATCH;
  if (a->count != b->count)
    return LS_CLASS_COUNT_MISMATCH;
  if (a->dtype != b->dtype)
    return LS_CLASS_DTYPE_MISMATCH;
  if (a->root_or_peer != b->root_or_peer)
    return a->kind == LS_FP_KIND_P2P ? LS_CLASS_PEER_MISMATCH : LS_CLASS_ROOT_MISMATCH;
  if (a->redop != b->redop)
    return LS_CLASS_REDOP_MISMATCH;
  return LS_CLASS_NONE;
}

#endif
