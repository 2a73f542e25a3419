/* cmd_compare.c — `lockstep compare DIR`: load every trace of a run, align the
 * ranks per communicator (compare.c) and print the divergences, the first one
 * first. Exit 0 consistent, 1 divergent, 2 bad input, 3 incomplete. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apidb.h"
#include "commands.h"
#include "compare.h"
#include "report.h"
#include "symbolize.h"
#include "trace_read.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: lockstep compare [--format=text|json] DIR|FILE...\n"
          "\n"
          "Reads the *.lstrace files of DIR (the --trace-dir of `lockstep run`), aligns every\n"
          "communicator's calls across its ranks and names the divergences, the first one first:\n"
          "op-, count-, dtype-, root-, redop-, peer-mismatch, skip, extra-call, api-error,\n"
          "async-error, not-ready (a call on a non-blocking communicator before its init or\n"
          "finalize was polled to success), after-abort (a call after ncclCommAbort or an async\n"
          "error), incomplete, timeout, overwritten (ring traces, LOCKSTEP_TRACE_RING=1: the\n"
          "digest index names the block of seqs where ranks first part, but the ring no longer\n"
          "holds those calls). Call sites print as file:line when the program has debug info\n"
          "(addr2line).\n"
          "Exit: 0 consistent, 1 divergent, 2 bad input (a damaged or foreign file is named),\n"
          "3 incomplete: no divergence in what was compared, but part of the run is missing (a\n"
          "rank without a trace, a hole in a rank's sequence, dropped or unwritten records, no\n"
          "communicator at all); each 'incomplete:' line names the file and what is missing.\n");
}

static cJSON *comms_json(const struct ls_compare *cmp) {
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; i < cmp->ncomms; i++) {
    const struct ls_comm *cm = &cmp->comms[i];
    cJSON *o = cJSON_CreateObject();
    char id[40];
    ls_format_comm(cm->id, cm->incarnation, id, sizeof id);
    cJSON_AddStringToObject(o, "id", id);
    cJSON_AddNumberToObject(o, "size", cm->size);
    cJSON *seen = cJSON_AddArrayToObject(o, "ranks_seen");
    for (int rk = 0; rk < cm->nslots; rk++)
      if (cm->ranks[rk].present)
        cJSON_AddItemToArray(seen, cJSON_CreateNumber(rk));
    cJSON_AddNumberToObject(o, "calls", (double)cm->calls);
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

int ls_cmd_compare(int argc, char **argv) {
  int json = 0;
  char **paths = calloc((size_t)argc + 1, sizeof *paths);
  size_t npaths = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      free(paths);
      return 0;
    } else if (!strcmp(argv[i], "--format=json") || (!strcmp(argv[i], "--format") && i + 1 < argc &&
                                                     !strcmp(argv[i + 1], "json") && ++i)) {
      json = 1;
    } else if (!strcmp(argv[i], "--format=text") || (!strcmp(argv[i], "--format") && i + 1 < argc &&
                                                     !strcmp(argv[i + 1], "text") && ++i)) {
      json = 0;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "lockstep compare: unknown option '%s'\n", argv[i]);
      usage(stderr);
      free(paths);
      return 2;
    } else {
      paths[npaths++] = argv[i];
    }
  }
  if (!npaths) {
    fprintf(stderr, "lockstep compare: no trace directory given\n");
    usage(stderr);
    free(paths);
    return 2;
  }
  struct ls_trace_set set;
  if (ls_trace_set_load_indexed(&set, paths, npaths)) {
    free(paths);
    return 2;
  }
  free(paths);
  struct ls_apidb db;
  ls_apidb_load(&db);
  struct ls_compare cmp;
  if (ls_compare_run(&set, &db, &cmp)) {
    ls_apidb_free(&db);
    ls_trace_set_free(&set);
    return 2;
  }
  struct ls_symbolizer *sym = ls_sym_new();
  ls_divergences_want(sym, &cmp);
  ls_sym_run(sym);

  if (json) {
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddNumberToObject(doc, "version", 1);
    cJSON_AddStringToObject(doc, "status", ls_compare_status(&cmp));
    cJSON *files = cJSON_AddArrayToObject(doc, "files");
    for (size_t i = 0; i < set.n; i++)
      cJSON_AddItemToArray(files, ls_json_text(set.traces[i].path));
    cJSON_AddItemToObject(doc, "communicators", comms_json(&cmp));
    cJSON *divs = cJSON_AddArrayToObject(doc, "divergences");
    for (size_t i = 0; i < cmp.ndiv; i++)
      cJSON_AddItemToArray(divs, ls_divergence_json(sym, &cmp.div[i]));
    ls_json_add_texts(doc, "notes", cmp.notes, cmp.nnotes);
    ls_json_add_texts(doc, "incomplete", cmp.missing, cmp.nmissing);
    ls_json_print(stdout, doc);
    cJSON_Delete(doc);
  } else {
    for (size_t i = 0; i < cmp.ndiv; i++)
      ls_divergence_print(stdout, &db, sym, &cmp.div[i]);
    for (size_t i = 0; i < cmp.nnotes; i++)
      printf("note: %s\n", cmp.notes[i]);
    for (size_t i = 0; i < cmp.nmissing; i++)
      printf("incomplete: %s\n", cmp.missing[i]);
    size_t calls = 0;
    for (size_t i = 0; i < cmp.ncomms; i++)
      calls += cmp.comms[i].calls;
    printf("lockstep: %s: %zu trace%s, %zu communicator%s, %zu call%s aligned%s%s\n", ls_compare_status(&cmp),
           set.n, set.n == 1 ? "" : "s", cmp.ncomms, cmp.ncomms == 1 ? "" : "s", calls, calls == 1 ? "" : "s",
           cmp.ndiv ? "; the first divergence is listed first" : "",
           cmp.nmissing ? "; part of the run was not seen (the 'incomplete:' lines)" : "");
  }
  int rc = cmp.ndiv ? LS_EXIT_DIVERGENT : cmp.nmissing ? LS_EXIT_INCOMPLETE : 0;
  ls_sym_free(sym);
  ls_compare_free(&cmp);
  ls_apidb_free(&db);
  ls_trace_set_free(&set);
  return rc;
}
