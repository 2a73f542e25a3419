/* fuzz_trace.c — libFuzzer harness for the trace reader (runtime/tools/trace_read.c):
 * the input is the whole trace file. A file that loads is then exported (json and
 * perfetto, which runs compare too) the way `lockstep trace export` does; a file
 * that does not load must be rejected with "FILE: offset N: ..." (exit 2 in the CLI).
 * Non-goal: finding mutations that pass validation (fuzz_compare builds valid traces). */
#include "fuzz_common.h"

#include "apidb.h"
#include "commands.h"
#include "compare.h"
#include "trace_read.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fz_init_io();
  /* No addr2line: symbolizing would spawn a process per input and fuzz binutils. */
  setenv("PATH", "/nonexistent", 1);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct fz_file f;
  fz_file_open(&f, data, size);

  struct ls_trace t;
  char err[512];
  err[0] = 0;
  int rc = ls_trace_load(f.path, &t, err, sizeof err);
  if (rc != 0) {
    if (strncmp(err, "offset ", 7) != 0)
      fz_contract("ls_trace_load rejected the file without naming an offset", err);
  } else {
    /* Touch everything a reader may touch. */
    for (uint64_t i = 0; i < t.nrecords; i++) {
      const struct ls_trace_record *r = &t.records[i];
      if (r->state == LS_REC_FREE)
        continue;
      (void)strlen(ls_trace_api_name(&t, r));
      (void)ls_kind_name(ls_trace_api_kind(&t, r));
      (void)ls_trace_module_of(&t, r->site_pc);
      (void)ls_trace_realtime(&t, r->t_enter_ns);
    }
    ls_trace_free(&t);
  }

  /* The command line path: export must succeed on a loadable file and fail with
   * exit 2 naming the file otherwise. */
  static const char *const formats[] = {"json", "perfetto"};
  for (int k = 0; k < 2; k++) {
    char *argv[] = {"trace", "export", "--format", (char *)formats[k], "-o", "/dev/null", f.path, NULL};
    fz_capture_begin();
    int x = ls_cmd_trace(7, argv);
    const char *msg = fz_capture_end();
    if (rc == 0 && x != 0)
      fz_contract("trace export failed on a trace that loads", msg);
    if (rc != 0 && x != 2)
      fz_contract("trace export did not exit 2 on a bad trace", msg);
    if (rc != 0 && (!strstr(msg, f.path) || !strstr(msg, "offset ")))
      fz_contract("trace export's error does not name the file and an offset", msg);
    if (rc != 0)
      break;
  }
  fz_file_close(&f);
  return 0;
}
