/* fingerprint_test.c — ls_fp_diff names the first differing field in DESIGN's order
 * (op, count, dtype, root/peer, redop) and every class has one distinct name. The
 * online check and compare both call it, so this order is the one both print. */
#include "fingerprint.h"

#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                                               \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      fprintf(stderr, "fingerprint_test:%d: ", __LINE__);                                                              \
      fprintf(stderr, __VA_ARGS__);                                                                                    \
      fputc('\n', stderr);                                                                                             \
      failures++;                                                                                                      \
    }                                                                                                                  \
  } while (0)

static void expect(int same_op, struct ls_fp_fields a, struct ls_fp_fields b, enum ls_class want) {
  enum ls_class got = ls_fp_diff(same_op, &a, &b);
  CHECK(got == want, "got %s, want %s", got ? ls_class_name(got) : "none", want ? ls_class_name(want) : "none");
}

int main(void) {
  const struct ls_fp_fields base = {.count = 4, .dtype = 7, .redop = 0, .root_or_peer = 0, .kind = 1};
  struct ls_fp_fields all = {.count = 8, .dtype = 9, .redop = 2, .root_or_peer = 1, .kind = 1};
  expect(1, base, base, LS_CLASS_NONE);
  expect(0, base, base, LS_CLASS_OP_MISMATCH);
  expect(0, base, all, LS_CLASS_OP_MISMATCH);
  expect(1, base, all, LS_CLASS_COUNT_MISMATCH);
  all.count = base.count;
  expect(1, base, all, LS_CLASS_DTYPE_MISMATCH);
  all.dtype = base.dtype;
  /* root and reduction op both differ (an ncclReduce): root is named, as DESIGN orders F_k */
  expect(1, base, all, LS_CLASS_ROOT_MISMATCH);
  struct ls_fp_fields p2p = base, p2p_other = all;
  p2p.kind = p2p_other.kind = LS_FP_KIND_P2P;
  expect(1, p2p, p2p_other, LS_CLASS_PEER_MISMATCH);
  all.root_or_peer = base.root_or_peer;
  expect(1, base, all, LS_CLASS_REDOP_MISMATCH);

  CHECK(ls_class_name(LS_CLASS_NONE) == NULL, "LS_CLASS_NONE has a name");
  CHECK(ls_class_name(LS_CLASS_COUNT) == NULL, "LS_CLASS_COUNT has a name");
  for (int i = 1; i < LS_CLASS_COUNT; i++) {
    const char *n = ls_class_name((enum ls_class)i);
    CHECK(n && n[0], "class %d has no name", i);
    for (int j = 1; n && j < i; j++)
      CHECK(strcmp(n, ls_class_name((enum ls_class)j)) != 0, "classes %d and %d share the name %s", j, i, n);
  }
  CHECK(!strcmp(ls_class_name(LS_CLASS_OP_MISMATCH), "op-mismatch"), "op-mismatch is misnamed");
  if (failures)
    return 1;
  printf("fingerprint_test: ok (%d classes)\n", LS_CLASS_COUNT - 1);
  return 0;
}
