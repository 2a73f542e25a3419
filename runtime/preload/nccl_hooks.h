/* nccl_hooks.h — the NCCL family's pre/post hooks, called by the wrappers that
 * runtime/gen generates from rules/nccl.json (see recorder.h for the call order). */
#ifndef LOCKSTEP_NCCL_HOOKS_H
#define LOCKSTEP_NCCL_HOOKS_H

#include "recorder.h"

/* After the wrapper filled c->args: kind-specific fields, then ls_call_enter(). */
LS_HIDDEN void ls_nccl_pre(struct ls_call *c);
/* After the real call (c->t_exit set): registration of new communicators, then
 * ls_call_exit(). `rc` is what NCCL returned; the wrapper returns it unchanged. */
LS_HIDDEN void ls_nccl_post(struct ls_call *c, int64_t rc);

#endif
