/* trace_dump.c — a tiny, independent reader of .lstrace files for the recorder's
 * tests: validates the header against runtime/trace_format.h and prints one line per
 * record as key=value pairs that shell tests grep and awk. It reads with read(), not
 * mmap, to see the file exactly as a reader after a crash would. Exit 2 on damage. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_format.h"
#include "trace_index.h"

/* trace_dump --index FILE.lstrace.idx: the snapshot in force and its blocks, one line each
 * ("blk comm=HEX rank= inc= block= first= last= chain=HEX local=HEX flags="), for tests that
 * compare two writers' digests. */
static int dump_index(const char *path) {
  FILE *f = fopen(path, "rb");
  struct ls_index_header h;
  if (!f || fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, LS_INDEX_MAGIC, 8) || (h.current != 1 && h.current != 2)) {
    fprintf(stderr, "trace_dump: %s: not a published index\n", path);
    return 2;
  }
  struct ls_index_snap sn;
  if (fseek(f, (long)h.snap_offset[h.current - 1], SEEK_SET) || fread(&sn, sizeof sn, 1, f) != 1)
    return 2;
  printf("index block=%u covered=%llu entries=%llu streams=%u features=0x%x\n", h.block,
         (unsigned long long)sn.covered, (unsigned long long)sn.nentries, sn.nstreams, sn.features);
  if (fseek(f, (long)h.entries_offset, SEEK_SET))
    return 2;
  for (uint64_t i = 0; i < sn.nentries; i++) {
    struct ls_index_block b;
    if (fread(&b, sizeof b, 1, f) != 1)
      return 2;
    printf("blk comm=%016llx rank=%d inc=%u block=%llu first=%llu last=%llu chain=%016llx local=%016llx flags=%u\n",
           (unsigned long long)b.comm, b.rank, b.inc, (unsigned long long)b.block, (unsigned long long)b.first,
           (unsigned long long)b.last, (unsigned long long)b.chain, (unsigned long long)b.local, b.flags);
  }
  fclose(f);
  return 0;
}

/* "outer,event,..." or "-": shell tests grep names instead of doing bit arithmetic. */
static const char *names(unsigned f, const char *const *tab, unsigned n, char *buf, size_t cap) {
  buf[0] = 0;
  for (unsigned i = 0; i < n; i++)
    if (f & (1u << i)) {
      size_t l = strlen(buf);
      snprintf(buf + l, cap - l, "%s%s", l ? "," : "", tab[i]);
    }
  if (!buf[0])
    snprintf(buf, cap, "-");
  return buf;
}
static const char *const rec_flag_names[] = {"outer", "event", "complete", "timedout",
                                             "ingroup", "nonblocking", "nodevice"};
static const char *const hdr_flag_names[] = {"partial", "clean", "watchdog"};

static int bad(const char *path, const char *what) {
  fprintf(stderr, "trace_dump: %s: %s\n", path, what);
  return 2;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--index"))
    return dump_index(argv[2]);
  if (argc != 2) {
    fprintf(stderr, "usage: trace_dump FILE.lstrace\n");
    return 2;
  }
  const char *path = argv[1];
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st))
    return bad(path, "cannot open");
  size_t size = (size_t)st.st_size;
  char *m = malloc(size ? size : 1);
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, m + got, size - got);
    if (n <= 0)
      return bad(path, "read failed");
    got += (size_t)n;
  }
  close(fd);
  if (size < LS_TRACE_HEADER_SIZE)
    return bad(path, "shorter than a header");
  const struct ls_trace_header *h = (const void *)m;
  int ring = h->version == LS_TRACE_VERSION_RING && (h->flags & LS_TRACE_F_RING) && h->capacity;
  if (memcmp(h->magic, LS_TRACE_MAGIC, 8) || (h->version != LS_TRACE_VERSION && !ring) ||
      h->record_size != LS_TRACE_RECORD_SIZE || h->header_size != LS_TRACE_HEADER_SIZE)
    return bad(path, "not a lockstep trace (magic/version/sizes)");
  /* the file grows with its records: the claimed ones must be in it, but for those
   * dropped on a full disk (partial) */
  uint64_t n = h->nrecords < h->capacity ? h->nrecords : h->capacity;
  /* a ring: ordinals [first, nrecords) are live, ordinal o in slot o % capacity */
  uint64_t first = ring && h->nrecords > h->capacity ? h->nrecords - h->capacity : 0;
  uint64_t infile = size > h->records_offset ? (size - h->records_offset) / LS_TRACE_RECORD_SIZE : 0;
  if (n > infile && (h->flags & LS_TRACE_F_PARTIAL))
    n = infile;
  if (h->records_offset + n * LS_TRACE_RECORD_SIZE > size)
    return bad(path, "truncated");
  const struct ls_trace_api *apis = (const void *)(m + h->api_offset);
  char fb[128];
  printf("header pid=%d rank=%d size=%d napis=%u nmodules=%u nrecords=%" PRIu64
         " capacity=%" PRIu64 " flags=0x%x hflags=%s timeout_ms=%u host=%s\n",
         h->pid, h->launcher_rank, h->launcher_size, h->napis, h->nmodules, h->nrecords,
         h->capacity, h->flags, names(h->flags, hdr_flag_names, 3, fb, sizeof fb), h->timeout_ms,
         h->hostname);
  if (ring)
    printf("ring first=%" PRIu64 " dropped=%" PRIu64 "\n", first, h->dropped);
  for (uint32_t i = 0; i < h->napis; i++)
    printf("api %u %s kind=%u family=%u op_class=%u\n", i, apis[i].name, apis[i].kind,
           apis[i].family, apis[i].op_class);
  const struct ls_trace_module *mods = (const void *)(m + h->modules_offset);
  for (uint32_t i = 0; i < h->nmodules && i < LS_TRACE_MAX_MODULES; i++)
    printf("module %u base=0x%" PRIx64 " start=0x%" PRIx64 " end=0x%" PRIx64 " path=%s\n", i,
           mods[i].base, mods[i].start, mods[i].end, mods[i].path);
  const struct ls_trace_record *slots = (const void *)(m + h->records_offset);
  struct ls_trace_record *r = calloc(n ? n : 1, sizeof *r); /* by ordinal - first */
  if (!r)
    return bad(path, "out of memory");
  for (uint64_t i = 0; i < n; i++) {
    const struct ls_trace_record *x = &slots[ring ? (first + i) % h->capacity : i];
    if (!ring || x->ordinal == first + i)
      r[i] = *x; /* else not written: state 0 */
  }
  for (uint64_t i = 0; i < n; i++) {
    if (r[i].state > LS_REC_RETURNED) {
      free(r);
      return bad(path, "record with an invalid state");
    }
    if (r[i].state == LS_REC_FREE) {
      printf("rec %" PRIu64 " state=0\n", first + i);
      continue;
    }
    if (r[i].api >= h->napis) {
      free(r);
      return bad(path, "record with an api id outside the table");
    }
    char seq[32];
    if (r[i].seq == LS_NO_SEQ)
      snprintf(seq, sizeof seq, "-");
    else
      snprintf(seq, sizeof seq, "%" PRIu64, r[i].seq);
    printf("rec %" PRIu64 " state=%u api=%s comm=%016" PRIx64 " seq=%s count=%" PRIu64
           " dtype=%d redop=%d rp=%d rc=%d depth=%d rank=%d size=%d tid=%u flags=0x%x fl=%s"
           " enter=%" PRIu64 " exit=%" PRIu64 " complete=%" PRIu64 " site=0x%" PRIx64
           " stream=0x%" PRIx64 " aux0=%" PRIu64 " aux1=%" PRIu64 "\n",
           first + i, r[i].state, apis[r[i].api].name, r[i].comm_id, seq, r[i].count, r[i].dtype,
           r[i].redop, r[i].root_or_peer, r[i].rc, r[i].group_depth, r[i].comm_rank,
           r[i].comm_size, r[i].tid, r[i].flags,
           names(r[i].flags, rec_flag_names, 7, fb, sizeof fb), r[i].t_enter_ns, r[i].t_exit_ns,
           r[i].t_complete_ns, r[i].site_pc, r[i].stream, r[i].aux0, r[i].aux1);
  }
  free(r);
  free(m);
  /* A dump cut short (a full disk) must not pass for a whole one. */
  if (fflush(stdout) != 0 || ferror(stdout))
    return bad(path, "cannot write the dump to standard output");
  return 0;
}
