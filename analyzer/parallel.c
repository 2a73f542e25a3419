/* parallel.c — `lint -j N`: parse the translation units of a compilation database on N
 * threads. Parsing (libclang, the expensive part) runs concurrently with one CXIndex per
 * thread; converting a parsed TU into the program's node trees writes shared state, so it
 * happens under a lock and strictly in input order: the analysis sees the TUs in the same
 * order as with -j 1, so findings and fingerprints do not depend on scheduling. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integ.h"

struct pool {
  ls_program *p;
  const ls_tu_job *jobs;
  size_t njobs;
  const ls_parse_opts *o;
  pthread_mutex_t mu;
  pthread_cond_t turn;
  size_t next_job;  /* next job to hand out */
  size_t next_conv; /* the only job that may be converted now */
  int failed, progress;
};

static void progress_line(struct pool *pl, size_t done, const char *file) {
  /* one line rewritten in place; long paths keep their tail, which names the file */
  size_t n = strlen(file);
  const char *shown = n > 60 ? file + n - 60 : file;
  fprintf(stderr, "\r\033[K[%zu/%zu] %s%s", done, pl->njobs, n > 60 ? "..." : "", shown);
  fflush(stderr);
}

static void *worker(void *arg) {
  struct pool *pl = arg;
  CXIndex idx = clang_createIndex(0, 0);
  for (;;) {
    pthread_mutex_lock(&pl->mu);
    size_t k = pl->next_job++;
    pthread_mutex_unlock(&pl->mu);
    if (k >= pl->njobs)
      break;
    const ls_tu_job *j = &pl->jobs[k];
    ls_parse_opts o = *pl->o;
    o.cuda = j->cuda;
    CXTranslationUnit tu = ls_tu_parse(idx, j->file, j->args, j->nargs, &o);
    /* jobs are handed out in order, so the one waited for is always parsing or done */
    pthread_mutex_lock(&pl->mu);
    while (pl->next_conv != k)
      pthread_cond_wait(&pl->turn, &pl->mu);
    if (tu) {
      ls_tu_convert(pl->p, tu, j->file, j->args, j->nargs, &o);
    } else { /* recorded too (not ok, fatal, no errors): every format names what was not analyzed */
      ls_tu_info *ti = ls_alloc(pl->p->arena, sizeof *ti);
      ti->file = ls_strdup(pl->p->arena, j->file);
      ti->fatal = 1;
      ls_vec_push(&pl->p->tus, ti);
      pl->failed = 1;
    }
    if (pl->progress)
      progress_line(pl, k + 1, j->file);
    pl->next_conv++;
    pthread_cond_broadcast(&pl->turn);
    pthread_mutex_unlock(&pl->mu);
  }
  clang_disposeIndex(idx);
  return NULL;
}

int ls_parse_all(ls_program *p, const ls_tu_job *jobs, size_t njobs, const ls_parse_opts *o, int nthreads,
                 int progress) {
  struct pool pl = {.p = p, .jobs = jobs, .njobs = njobs, .o = o, .progress = progress};
  pthread_mutex_init(&pl.mu, NULL);
  pthread_cond_init(&pl.turn, NULL);
  if (nthreads < 1)
    nthreads = 1;
  if ((size_t)nthreads > njobs)
    nthreads = njobs ? (int)njobs : 1;
  /* One at a time: on this thread (lint's own, with the same 512 MiB stack). A worker of
   * its own would start on the other CPU: the conversion, and then lint's analysis of
   * the nodes, would read what the thread before wrote from another CPU's caches. */
  pthread_t *th = nthreads > 1 ? calloc((size_t)nthreads, sizeof *th) : NULL;
  int started = 0;
  if (th) {
    pthread_attr_t at;
    pthread_attr_init(&at);
    /* the node conversion recurses over the AST's depth, as on lint's main thread */
    pthread_attr_setstacksize(&at, (size_t)512 << 20);
    for (int i = 0; i < nthreads && pthread_create(&th[i], &at, worker, &pl) == 0; i++)
      started++;
    pthread_attr_destroy(&at);
  }
  if (!started) /* one job at a time, or no thread could start: here */
    worker(&pl);
  for (int i = 0; i < started; i++)
    pthread_join(th[i], NULL);
  free(th);
  pthread_cond_destroy(&pl.turn);
  pthread_mutex_destroy(&pl.mu);
  if (progress && njobs)
    fputs("\r\033[K", stderr);
  return pl.failed;
}
