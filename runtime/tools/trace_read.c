/* trace_read.c — map a trace file read-only and validate it completely before
 * anyone looks at a record. Mapped, not read, so a thousand ranks' traces cost
 * what is being looked at, not what is on disk: passes over the records give
 * their pages back (ls_trace_release). A file truncated underneath the reader
 * would SIGBUS it: the handler says so and exits 2, as for any damaged input.
 * Files are loaded in parallel, one thread per core. */
#include "trace_read.h"
#include "xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

/* More ranks than any machine has: a corrupted size, not a communicator. */
#define LS_MAX_COMM_SIZE (1 << 22)

#define HOFF(field) ((unsigned long)offsetof(struct ls_trace_header, field))

static uint64_t region_end(uint64_t off, uint64_t n, uint64_t elsize) {
  return n > (UINT64_MAX - off) / elsize ? UINT64_MAX : off + n * elsize;
}

static int read_range(int fd, unsigned char *buf, size_t from, size_t to, char *err, size_t errlen) {
  while (from < to) {
    ssize_t got = pread(fd, buf + from, to - from, (off_t)from);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return fail(err, errlen, "offset %zu: read error: %s", from, strerror(errno));
    if (got == 0)
      return fail(err, errlen, "offset %zu: the file shrank while it was read (is its writer still running?)", from);
    from += (size_t)got;
  }
  return 0;
}

static void on_sigbus(int sig) {
  static const char msg[] = "lockstep: a trace file shrank while it was read (is its writer still running?)\n";
  (void)sig;
  (void)!write(2, msg, sizeof msg - 1);
  _exit(2);
}

static pthread_once_t g_sigbus_once = PTHREAD_ONCE_INIT;
static void install_sigbus(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigbus;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, NULL);
}

/* Maps what the header says is in use — tables and claimed records, not the
 * whole preallocated capacity (1 Mi slots = 128 MiB per rank) — and records
 * the file's real size for the bounds checks. A file too short for a header,
 * or without the magic, is read into a zeroed header-sized buffer instead. */
static int read_trace(const char *path, struct ls_trace *t, char *err, size_t errlen) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(err, errlen, "cannot open: %s", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return fail(err, errlen, "not a regular file");
  }
  size_t fsize = (size_t)st.st_size, want = fsize < LS_TRACE_HEADER_SIZE ? fsize : LS_TRACE_HEADER_SIZE;
  unsigned char *buf = calloc(1, LS_TRACE_HEADER_SIZE);
  if (!buf || read_range(fd, buf, 0, want, err, errlen)) {
    free(buf);
    close(fd);
    return buf ? -1 : fail(err, errlen, "out of memory");
  }
  if (want == LS_TRACE_HEADER_SIZE && !memcmp(buf, LS_TRACE_MAGIC, 8)) {
    const struct ls_trace_header *h = (const struct ls_trace_header *)buf;
    uint64_t used = h->nrecords < h->capacity ? h->nrecords : h->capacity, end = LS_TRACE_HEADER_SIZE, e;
    e = region_end(h->api_offset, h->napis, sizeof(struct ls_trace_api));
    end = e > end ? e : end;
    e = region_end(h->modules_offset, LS_TRACE_MAX_MODULES, sizeof(struct ls_trace_module));
    end = e > end ? e : end;
    e = region_end(h->records_offset, used, h->version == 1 ? LS_TRACE_RECORD_SIZE_V1 : LS_TRACE_RECORD_SIZE);
    end = e > end ? e : end;
    want = end < fsize ? (size_t)end : fsize;
    pthread_once(&g_sigbus_once, install_sigbus);
    /* The tables are copied (only what the header says is in use: a mapping would
     * also bring in its neighbours, the 128 KiB module table's unused slots) into
     * zero pages; the records are mapped on their own. */
    uint64_t tend = LS_TRACE_HEADER_SIZE, nmod = h->nmodules < LS_TRACE_MAX_MODULES ? h->nmodules : LS_TRACE_MAX_MODULES;
    uint64_t api_end = region_end(h->api_offset, h->napis, sizeof(struct ls_trace_api));
    uint64_t mod_end = region_end(h->modules_offset, LS_TRACE_MAX_MODULES, sizeof(struct ls_trace_module));
    tend = api_end > tend ? api_end : tend;
    tend = mod_end > tend ? mod_end : tend;
    tend = tend < fsize ? tend : fsize;
    uint64_t roff = h->records_offset,
             rend = region_end(roff, used, h->version == 1 ? LS_TRACE_RECORD_SIZE_V1 : LS_TRACE_RECORD_SIZE);
    rend = rend < fsize ? rend : fsize;
    if (roff >= tend && roff < rend && h->api_offset >= LS_TRACE_HEADER_SIZE && h->modules_offset >= LS_TRACE_HEADER_SIZE) {
      void *tab = mmap(NULL, (size_t)tend, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      uint64_t pg = roff / 4096 * 4096;
      void *rec = tab == MAP_FAILED ? MAP_FAILED : mmap(NULL, (size_t)(rend - pg), PROT_READ, MAP_PRIVATE, fd, (off_t)pg);
      uint64_t aend = api_end < tend ? api_end : tend, mend = region_end(h->modules_offset, nmod, sizeof(struct ls_trace_module));
      mend = mend < tend ? mend : tend;
      int rc = rec == MAP_FAILED ? fail(err, errlen, "cannot map the records: %s", strerror(errno)) : 0;
      if (!rc) {
        memcpy(tab, buf, LS_TRACE_HEADER_SIZE);
        if (h->api_offset < aend)
          rc = read_range(fd, tab, (size_t)h->api_offset, (size_t)aend, err, errlen);
        if (!rc && h->modules_offset < mend)
          rc = read_range(fd, tab, (size_t)h->modules_offset, (size_t)mend, err, errlen);
      }
      free(buf);
      close(fd);
      if (rc) {
        if (tab != MAP_FAILED)
          munmap(tab, (size_t)tend);
        if (rec != MAP_FAILED)
          munmap(rec, (size_t)(rend - pg));
        return -1;
      }
      t->data = tab;
      t->data_mapped = (size_t)tend;
      t->rec_map = rec;
      t->rec_mapped = (size_t)(rend - pg);
      t->rec_base = (const unsigned char *)rec + (roff - pg);
      t->size = fsize;
      return 0;
    }
    /* an unusual layout (records before the tables): map it all */
    void *map = mmap(NULL, want, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      free(buf);
      close(fd);
      return fail(err, errlen, "cannot map %zu bytes: %s", want, strerror(errno));
    }
    free(buf);
    close(fd);
    t->data = map;
    t->data_mapped = want;
    t->size = fsize;
    return 0;
  }
  close(fd);
  t->data = buf;
  t->size = fsize;
  return 0;
}

void ls_trace_release(const struct ls_trace *t, uint64_t from, uint64_t to) {
  if (!t->data_mapped || !t->records || t->converted || from >= to)
    return; /* a copy (version 1, converted) is not a mapping: never give it back */
  /* Rounded out to 64 KiB: a fault maps the page cache's neighbours too (fault-around),
   * and they count as ours until given back. Dropping a page still in use costs only
   * a fault: the mapping is read-only, so the kernel reads it again from the file. */
  uintptr_t lo = (uintptr_t)(t->rec_map ? t->rec_map : t->data);
  uintptr_t hi = lo + (t->rec_map ? t->rec_mapped : t->data_mapped);
  uintptr_t chunk = 65536, a = (uintptr_t)(t->records + from), b = (uintptr_t)(t->records + to);
  a = a > lo + chunk ? (a - chunk) / chunk * chunk : lo;
  b = (b + 2 * chunk - 1) / chunk * chunk;
  a = a < lo ? lo : a;
  b = b > hi ? (hi + 4095) / 4096 * 4096 : b;
  if (b > a)
    madvise((void *)a, b - a, MADV_DONTNEED);
}

/* [off, off + n*elsize) must lie after the header and inside the file. */
static int check_region(const struct ls_trace *t, uint64_t off, uint64_t n, uint64_t elsize, const char *what,
                        unsigned long field_off, char *err, size_t errlen) {
  if (off < LS_TRACE_HEADER_SIZE || off % 8 != 0)
    return fail(err, errlen, "offset %lu: %s offset %llu is inside the header or misaligned", field_off, what,
                (unsigned long long)off);
  if (n > (UINT64_MAX - off) / elsize)
    return fail(err, errlen, "offset %lu: %s size overflows (%llu entries)", field_off, what, (unsigned long long)n);
  if (off + n * elsize > t->size && off + n * elsize <= t->declared_size)
    return fail(err, errlen, "offset %zu: truncated: the file ends at %zu bytes but its %s extends to %llu", t->size,
                t->size, what, (unsigned long long)(off + n * elsize));
  if (off + n * elsize > t->size)
    return fail(err, errlen, "offset %lu: %s [%llu, %llu) extends past the end of the file (%zu bytes)", field_off,
                what, (unsigned long long)off, (unsigned long long)(off + n * elsize), t->size);
  return 0;
}

/* Two regions of the file [a, a+an) and [b, b+bn) share a byte. Ends do not overflow:
 * check_region has bounded them by the file size. */
static int overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn) { return an && bn && a < b + bn && b < a + an; }

static int validate(struct ls_trace *t, char *err, size_t errlen) {
  if (t->size == 0)
    return fail(err, errlen, "offset 0: empty file, not a lockstep trace");
  if (t->size < sizeof t->hdr->magic || memcmp(t->data, LS_TRACE_MAGIC, 8) != 0)
    return fail(err, errlen, "offset 0: not a lockstep trace (no \"%s\" magic)", LS_TRACE_MAGIC);
  if (t->size < LS_TRACE_HEADER_SIZE)
    return fail(err, errlen, "offset %zu: truncated inside the %u-byte header", t->size, LS_TRACE_HEADER_SIZE);
  const struct ls_trace_header *h = (const struct ls_trace_header *)t->data;
  t->hdr = h;
  int ring = h->version == LS_TRACE_VERSION_RING;
  if (h->version != LS_TRACE_VERSION && h->version != 1 && !ring)
    return fail(err, errlen, "offset %lu: unsupported trace version %u (this lockstep reads versions 1 to %u)",
                HOFF(version), h->version, LS_TRACE_VERSION_RING);
  if (ring != !!(h->flags & LS_TRACE_F_RING))
    return fail(err, errlen, "offset %lu: version %u with the ring flag %s", HOFF(flags), h->version,
                ring ? "clear" : "set");
  if (h->header_size != LS_TRACE_HEADER_SIZE)
    return fail(err, errlen, "offset %lu: header size %u, expected %u", HOFF(header_size), h->header_size,
                LS_TRACE_HEADER_SIZE);
  const uint64_t rsz = h->version == 1 ? LS_TRACE_RECORD_SIZE_V1 : LS_TRACE_RECORD_SIZE;
  if (h->record_size != rsz)
    return fail(err, errlen, "offset %lu: record size %u, expected %llu for version %u", HOFF(record_size),
                h->record_size, (unsigned long long)rsz, h->version);
  if (!memchr(h->hostname, 0, sizeof h->hostname))
    return fail(err, errlen, "offset %lu: hostname is not NUL-terminated", HOFF(hostname));
  if (!memchr(h->exe, 0, sizeof h->exe))
    return fail(err, errlen, "offset %lu: exe path is not NUL-terminated", HOFF(exe));

  /* The records region comes last: where it ends is the size the writer gave
   * the file, so a region past EOF but before that end means truncation. */
  uint64_t roff = h->records_offset, cap = h->capacity;
  if (roff < LS_TRACE_HEADER_SIZE || roff % 8 != 0)
    return fail(err, errlen, "offset %lu: records offset %llu is inside the header or misaligned",
                HOFF(records_offset), (unsigned long long)roff);
  if (cap > (UINT64_MAX - roff) / rsz)
    return fail(err, errlen, "offset %lu: records offset %llu with capacity %llu overflows", HOFF(records_offset),
                (unsigned long long)roff, (unsigned long long)cap);
  t->declared_size = roff + cap * rsz;
  if (check_region(t, h->api_offset, h->napis, sizeof(struct ls_trace_api), "api table", HOFF(api_offset), err,
                   errlen))
    return -1;
  if (h->nmodules > LS_TRACE_MAX_MODULES)
    return fail(err, errlen, "offset %lu: %u modules, more than the table's %u slots", HOFF(nmodules), h->nmodules,
                LS_TRACE_MAX_MODULES);
  if (check_region(t, h->modules_offset, LS_TRACE_MAX_MODULES, sizeof(struct ls_trace_module), "module table",
                   HOFF(modules_offset), err, errlen))
    return -1;
  /* The writer lays the tables and the records out one after the other; regions that
   * share bytes would read one as the other (records that are module paths). */
  uint64_t alen = (uint64_t)h->napis * sizeof(struct ls_trace_api),
           mlen = (uint64_t)LS_TRACE_MAX_MODULES * sizeof(struct ls_trace_module), rlen = cap * rsz;
  if (overlap(h->api_offset, alen, h->modules_offset, mlen))
    return fail(err, errlen, "offset %lu: module table [%llu, %llu) overlaps the api table [%llu, %llu)",
                HOFF(modules_offset), (unsigned long long)h->modules_offset,
                (unsigned long long)(h->modules_offset + mlen), (unsigned long long)h->api_offset,
                (unsigned long long)(h->api_offset + alen));
  if (overlap(roff, rlen, h->api_offset, alen) || overlap(roff, rlen, h->modules_offset, mlen)) {
    int api = overlap(roff, rlen, h->api_offset, alen);
    uint64_t o = api ? h->api_offset : h->modules_offset, n = api ? alen : mlen;
    return fail(err, errlen, "offset %lu: records [%llu, %llu) overlap the %s [%llu, %llu)", HOFF(records_offset),
                (unsigned long long)roff, (unsigned long long)(roff + rlen), api ? "api table" : "module table",
                (unsigned long long)o, (unsigned long long)(o + n));
  }
  if (h->pid <= 0)
    return fail(err, errlen, "offset %lu: process id %d", HOFF(pid), h->pid);
  if (h->launcher_size == 0 || h->launcher_size < -1 || h->launcher_size > LS_MAX_COMM_SIZE)
    return fail(err, errlen, "offset %lu: launcher world size %d (expected -1, unknown, or 1 to %d)",
                HOFF(launcher_size), h->launcher_size, LS_MAX_COMM_SIZE);
  if (h->launcher_rank < -1 || (h->launcher_size > 0 && h->launcher_rank >= h->launcher_size))
    return fail(err, errlen, "offset %lu: launcher rank %d is not within a world of size %d", HOFF(launcher_rank),
                h->launcher_rank, h->launcher_size);
  /* Version 1 files have every slot from the start; since version 2 a file grows with
   * its records, so only the claimed ones must be in it — except claims the writer
   * dropped for lack of disk space (the partial flag), which lie past its end. */
  uint64_t claimed = h->nrecords < cap ? h->nrecords : cap, beyond = 0;
  uint64_t infile = t->size > roff ? (t->size - roff) / rsz : 0;
  if (h->version != 1 && claimed > infile && (h->flags & LS_TRACE_F_PARTIAL)) {
    beyond = claimed - infile;
    claimed = infile;
  }
  if (ring && cap == 0)
    return fail(err, errlen, "offset %lu: a ring trace with no slots", HOFF(capacity));
  uint64_t need = h->version == 1 ? cap : claimed;
  if (roff + need * rsz > t->size)
    return fail(err, errlen,
                "offset %zu: truncated: the file ends at %zu bytes but its %llu %srecord slots end at %llu",
                t->size, t->size, (unsigned long long)need, h->version == 1 ? "" : "claimed ",
                (unsigned long long)(roff + need * rsz));

  t->apis = (const struct ls_trace_api *)(t->data + h->api_offset);
  for (uint32_t i = 0; i < h->napis; i++) {
    unsigned long off = (unsigned long)(h->api_offset + (uint64_t)i * sizeof(struct ls_trace_api));
    if (!memchr(t->apis[i].name, 0, sizeof t->apis[i].name))
      return fail(err, errlen, "offset %lu: api entry %u: name is not NUL-terminated", off, i);
    if (!t->apis[i].name[0])
      return fail(err, errlen, "offset %lu: api entry %u: empty name", off, i);
    for (const char *c = t->apis[i].name; *c; c++)
      if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
        return fail(err, errlen, "offset %lu: api entry %u: name is not a C identifier", off, i);
  }
  t->modules = (const struct ls_trace_module *)(t->data + h->modules_offset);
  t->nmodules = h->nmodules;
  for (uint32_t i = 0; i < t->nmodules; i++) {
    unsigned long off = (unsigned long)(h->modules_offset + (uint64_t)i * sizeof(struct ls_trace_module));
    if (!memchr(t->modules[i].path, 0, sizeof t->modules[i].path))
      return fail(err, errlen, "offset %lu: module %u: path is not NUL-terminated", off, i);
    if (t->modules[i].start > t->modules[i].end)
      return fail(err, errlen, "offset %lu: module %u: start 0x%llx is after end 0x%llx", off, i,
                  (unsigned long long)t->modules[i].start, (unsigned long long)t->modules[i].end);
  }

  t->nrecords = claimed;
  const unsigned char *rbytes = t->rec_base ? t->rec_base : t->data + roff;
  if (ring) {
    /* Version 3: laid out by ordinal, oldest first, from the lowest live one; a slot
     * that names another ordinal was never written (the process died claiming it). */
    t->first = h->nrecords > cap ? h->nrecords - cap : 0;
    struct ls_trace_record *v = calloc(t->nrecords ? t->nrecords : 1, sizeof *v);
    if (!v)
      return fail(err, errlen, "out of memory reading %llu ring records", (unsigned long long)t->nrecords);
    for (uint64_t i = 0; i < t->nrecords; i++) {
      const struct ls_trace_record *x = (const struct ls_trace_record *)(rbytes + ((t->first + i) % cap) * rsz);
      if (x->ordinal == t->first + i)
        v[i] = *x;
    }
    t->converted = v;
    t->records = v;
    if (t->rec_mapped) {
      munmap(t->rec_map, t->rec_mapped);
      t->rec_map = NULL;
      t->rec_base = NULL;
      t->rec_mapped = 0;
    }
  } else if (rsz == LS_TRACE_RECORD_SIZE) {
    t->records = (const struct ls_trace_record *)rbytes;
  } else {
    /* Version 1: each record is the prefix of today's; the rest (callers) stays 0. */
    struct ls_trace_record *v = calloc(t->nrecords ? t->nrecords : 1, sizeof *v);
    if (!v)
      return fail(err, errlen, "out of memory converting %llu version-1 records", (unsigned long long)t->nrecords);
    for (uint64_t i = 0; i < t->nrecords; i++)
      memcpy(&v[i], rbytes + i * rsz, (size_t)rsz);
    t->converted = v;
    t->records = v;
    if (t->rec_mapped) { /* read once into the copy: the mapping has done its job */
      munmap(t->rec_map, t->rec_mapped);
      t->rec_map = NULL;
      t->rec_base = NULL;
      t->rec_mapped = 0;
    }
  }
  t->dropped = ring ? h->dropped : (h->nrecords > cap ? h->nrecords - cap : 0) + beyond;
  t->partial = (h->flags & LS_TRACE_F_PARTIAL) || t->dropped;
  t->checked_from = t->nrecords;
  return 0;
}

int ls_trace_check_records(struct ls_trace *t, uint64_t from, uint64_t to, char *err, size_t errlen) {
  const struct ls_trace_header *h = t->hdr;
  const uint64_t rsz = h->version == 1 ? LS_TRACE_RECORD_SIZE_V1 : LS_TRACE_RECORD_SIZE, roff = h->records_offset;
  for (uint64_t i = from; i < to; i++) {
    const struct ls_trace_record *r = &t->records[i];
    unsigned long long off = (unsigned long long)(roff + i * rsz);
    if (i % LS_TRACE_RELEASE_EVERY == 0 && i > from)
      ls_trace_release(t, i - LS_TRACE_RELEASE_EVERY, i);
    if (r->state > LS_REC_RETURNED)
      return fail(err, errlen, "offset %llu: record %llu: invalid state %u", off, (unsigned long long)i, r->state);
    if (r->state == LS_REC_FREE) {
      t->unwritten++;
      continue;
    }
    if (r->api >= h->napis)
      return fail(err, errlen, "offset %llu: record %llu: api index %u out of range (the api table has %u entries)",
                  off + offsetof(struct ls_trace_record, api), (unsigned long long)i, r->api, h->napis);
    if (r->seq != LS_NO_SEQ && r->comm_size > LS_MAX_COMM_SIZE)
      return fail(err, errlen, "offset %llu: record %llu: implausible communicator size %d",
                  off + offsetof(struct ls_trace_record, comm_size), (unsigned long long)i, r->comm_size);
    if (r->seq != LS_NO_SEQ && (r->comm_size <= 0 || r->comm_rank < 0 || r->comm_rank >= r->comm_size))
      return fail(err, errlen, "offset %llu: record %llu: rank %d is not within a communicator of size %d",
                  off + offsetof(struct ls_trace_record, comm_rank), (unsigned long long)i, r->comm_rank,
                  r->comm_size);
    if (r->state == LS_REC_RETURNED && r->t_exit_ns < r->t_enter_ns)
      return fail(err, errlen, "offset %llu: record %llu: returned before it was entered",
                  off + offsetof(struct ls_trace_record, t_exit_ns), (unsigned long long)i);
  }
  return 0;
}

/* Reads the snapshot `which` of an index and the entries it counts; 0 when all of it is
 * sound, else -1 with why. */
static int read_snapshot(int fd, size_t fsize, const struct ls_index_header *h, unsigned which, struct ls_trace *t,
                         char *why, size_t whylen) {
  struct ls_index_snap sn = {0};
  uint64_t so = h->snap_offset[which];
  if (so < LS_INDEX_HEADER_SIZE || so > fsize || fsize - so < sizeof sn || pread(fd, &sn, sizeof sn, (off_t)so) != (ssize_t)sizeof sn)
    return fail(why, whylen, "snapshot %u lies outside the file", which);
  /* covered counts ordinals: a ring that came round keeps fewer records than it took */
  if (sn.nstreams > h->max_streams || sn.covered > t->first + t->nrecords ||
      (uint64_t)(fsize - so - sizeof sn) / sizeof(struct ls_index_stream) < sn.nstreams)
    return fail(why, whylen, "snapshot %u covers %llu records of %llu, %u streams", which,
                (unsigned long long)sn.covered, (unsigned long long)(t->first + t->nrecords), sn.nstreams);
  /* an index that stopped (too many streams) no longer holds the ring back: the ordinals
   * between what it covers and the oldest kept record are in neither */
  if (sn.covered < t->first)
    return fail(why, whylen, "snapshot %u covers %llu calls, fewer than the %llu the ring overwrote", which,
                (unsigned long long)sn.covered, (unsigned long long)t->first);
  if (h->entries_offset > fsize || sn.nentries > (fsize - h->entries_offset) / sizeof(struct ls_index_block) ||
      sn.nentries > h->entries_cap)
    return fail(why, whylen, "snapshot %u counts %llu entries past the end of the file", which,
                (unsigned long long)sn.nentries);
  /* zeroed: a short read leaves zeros, never garbage (and is bad below) */
  struct ls_index_stream *st = calloc(sn.nstreams ? sn.nstreams : 1, sizeof *st);
  struct ls_index_block *bl = calloc(sn.nentries ? (size_t)sn.nentries : 1, sizeof *bl);
  if (!st || !bl) {
    free(st);
    free(bl);
    return fail(why, whylen, "out of memory for %llu entries", (unsigned long long)sn.nentries);
  }
  size_t stn = sn.nstreams * sizeof *st, bln = (size_t)sn.nentries * sizeof *bl;
  int bad = (stn && pread(fd, st, stn, (off_t)(so + sizeof sn)) != (ssize_t)stn) ||
            (bln && pread(fd, bl, bln, (off_t)h->entries_offset) != (ssize_t)bln);
  struct ls_index_snap v = sn;
  v.check = 0;
  if (!bad && (ls_idx_check(&v, sizeof v) ^ ls_idx_check(st, stn)) != sn.check)
    bad = fail(why, whylen, "snapshot %u does not match its checksum", which) != 0;
  for (uint32_t i = 0; !bad && i < sn.nstreams; i++)
    if (st[i].n && (st[i].first > st[i].last || st[i].last >= sn.covered || st[i].open_first > st[i].last))
      bad = fail(why, whylen, "stream %u's records lie outside the %llu covered", i, (unsigned long long)sn.covered) != 0;
  for (uint64_t i = 0; !bad && i < sn.nentries; i++) {
    struct ls_index_block e = bl[i];
    e.check = 0;
    if (ls_idx_check(&e, sizeof e) != bl[i].check || e.first > e.last || e.last >= sn.covered)
      bad = fail(why, whylen, "entry %llu is damaged", (unsigned long long)i) != 0;
  }
  if (bad) {
    if (!why[0])
      snprintf(why, whylen, "snapshot %u cannot be read", which);
    free(st);
    free(bl);
    return -1;
  }
  t->idx_snap = sn;
  t->idx_streams = st;
  t->idx_blocks = bl;
  t->idx_block = h->block;
  t->has_index = 1;
  return 0;
}

/* PATH.idx, when there is one written for this very trace (same process and start). */
static void load_index(struct ls_trace *t) {
  char path[4200];
  snprintf(path, sizeof path, "%s%s", t->path, LS_INDEX_SUFFIX);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return; /* no index (an older writer, or turned off): not worth a note */
  struct stat st;
  struct ls_index_header h;
  char *why = t->idx_why;
  size_t wl = sizeof t->idx_why;
  if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof h || pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
    snprintf(why, wl, "too short for an index");
  else if (memcmp(h.magic, LS_INDEX_MAGIC, 8) || h.version != LS_INDEX_VERSION || h.header_size != LS_INDEX_HEADER_SIZE ||
           h.entry_size != sizeof(struct ls_index_block) || h.block < 2 || h.max_streams > LS_INDEX_MAX_STREAMS)
    snprintf(why, wl, "not an index this lockstep reads (version %u)", h.version);
  else if (h.pid != t->hdr->pid || h.t0_realtime_ns != t->hdr->t0_realtime_ns)
    snprintf(why, wl, "written for another process (pid %d)", h.pid);
  else if (h.current != 1 && h.current != 2)
    why[0] = 0; /* created, nothing indexed yet (a process killed early): as without one */
  else if (read_snapshot(fd, (size_t)st.st_size, &h, h.current - 1, t, why, wl) != 0) {
    /* a torn write of the one in force: the other is older but whole */
    char w2[200] = "";
    if (read_snapshot(fd, (size_t)st.st_size, &h, 2 - h.current, t, w2, sizeof w2) == 0)
      why[0] = 0;
  }
  close(fd);
}

static int load_one(const char *path, struct ls_trace *t, int indexed, char *err, size_t errlen) {
  memset(t, 0, sizeof *t);
  t->path = strdup(path);
  if (!t->path)
    return fail(err, errlen, "out of memory");
  if (read_trace(path, t, err, errlen) || validate(t, err, errlen)) {
    ls_trace_free(t);
    return -1;
  }
  /* a ring's records are a copy laid out by ordinal; a version-1 trace has no index */
  if (indexed && (!t->converted || t->hdr->version == LS_TRACE_VERSION_RING))
    load_index(t);
  t->checked_from = t->has_index ? t->idx_snap.covered - t->first : 0;
  if (ls_trace_check_records(t, t->checked_from, t->nrecords, err, errlen)) {
    ls_trace_free(t);
    return -1;
  }
  ls_trace_release(t, 0, t->nrecords); /* validate gave back all but its last stretch */
  return 0;
}

int ls_trace_load(const char *path, struct ls_trace *t, char *err, size_t errlen) {
  return load_one(path, t, 0, err, errlen);
}

void ls_trace_free(struct ls_trace *t) {
  free(t->path);
  free(t->idx_streams);
  free(t->idx_blocks);
  free(t->converted);
  if (t->data_mapped)
    munmap(t->data, t->data_mapped);
  else
    free(t->data);
  if (t->rec_mapped)
    munmap(t->rec_map, t->rec_mapped);
  memset(t, 0, sizeof *t);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int has_suffix(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n > m && !strcmp(s + n - m, suf);
}

/* Appends the *.lstrace files of DIR (sorted) to *names. */
static int list_dir(const char *dir, char ***names, size_t *n, size_t *cap) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "lockstep: %s: cannot open directory: %s\n", dir, strerror(errno));
    return -1;
  }
  size_t first = *n;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!has_suffix(e->d_name, LS_TRACE_FILE_SUFFIX))
      continue;
    if (*n == *cap) {
      *cap = *cap ? *cap * 2 : 16;
      *names = ls_xrealloc(*names, *cap * sizeof **names);
    }
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    char *p = malloc(len);
    snprintf(p, len, "%s%s%s", dir, has_suffix(dir, "/") ? "" : "/", e->d_name);
    (*names)[(*n)++] = p;
  }
  closedir(d);
  if (*n == first) {
    fprintf(stderr, "lockstep: %s: no *%s trace files (expected the --trace-dir of `lockstep run`)\n", dir,
            LS_TRACE_FILE_SUFFIX);
    return -1;
  }
  qsort(*names + first, *n - first, sizeof **names, cmp_str);
  return 0;
}

int ls_ncpus(void) {
  const char *env = getenv("LOCKSTEP_THREADS");
  long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

void ls_parallel(void *(*fn)(void *), void *arg) {
  int n = ls_ncpus();
  pthread_t th[64];
  int started = 0;
  for (int i = 1; i < n; i++)
    if (pthread_create(&th[started], NULL, fn, arg) == 0)
      started++;
  fn(arg); /* this thread works too; with no thread started it does everything */
  for (int i = 0; i < started; i++)
    pthread_join(th[i], NULL);
}

static int g_prog_on = -1;    /* decided once: stderr is a terminal */
static uint64_t g_prog_start; /* atomic: CLOCK_MONOTONIC ns of the first call */
static uint64_t g_prog_last;  /* atomic: ... of the last line */
static int g_prog_shown;      /* atomic: a line is on the terminal */
static pthread_once_t g_prog_once = PTHREAD_ONCE_INIT;

static void prog_decide(void) {
  const char *e = getenv("LOCKSTEP_PROGRESS");
  g_prog_on = isatty(2) && !(e && !strcmp(e, "0"));
}

void ls_progress(const char *phase, size_t done, size_t total) {
  pthread_once(&g_prog_once, prog_decide);
  if (!g_prog_on)
    return;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, zero = 0;
  __atomic_compare_exchange_n(&g_prog_start, &zero, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  uint64_t last = __atomic_load_n(&g_prog_last, __ATOMIC_RELAXED);
  /* nothing in a run's first second; then a line every 200 ms, from one thread at a time */
  if (now - __atomic_load_n(&g_prog_start, __ATOMIC_RELAXED) < 1000000000u || now - last < 200000000u ||
      !__atomic_compare_exchange_n(&g_prog_last, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    return;
  char line[160];
  int n = snprintf(line, sizeof line, "\rlockstep: %s %zu/%zu\033[K", phase, done, total);
  if (n > 0)
    (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
  __atomic_store_n(&g_prog_shown, 1, __ATOMIC_RELAXED);
}

void ls_progress_end(void) {
  if (g_prog_on == 1 && __atomic_load_n(&g_prog_shown, __ATOMIC_RELAXED))
    (void)!write(2, "\r\033[K", 4);
}

struct loader {
  char **names;
  size_t n;
  struct ls_trace *out;
  char (*err)[512]; /* per file: the message when it did not load */
  char *ok;
  int indexed;
  size_t next; /* atomic: the next file to take */
};

static void *load_some(void *arg) {
  struct loader *ld = arg;
  for (;;) {
    size_t i = __atomic_fetch_add(&ld->next, 1, __ATOMIC_RELAXED);
    if (i >= ld->n)
      return NULL;
    ld->ok[i] = load_one(ld->names[i], &ld->out[i], ld->indexed, ld->err[i], sizeof ld->err[i]) == 0;
    ls_progress("loading traces", i + 1, ld->n);
  }
}

static int set_load(struct ls_trace_set *set, char *const *paths, size_t npaths, int indexed) {
  char **names = NULL;
  size_t n = 0, cap = 0;
  int bad = 0;
  memset(set, 0, sizeof *set);
  for (size_t i = 0; i < npaths; i++) {
    struct stat st;
    if (stat(paths[i], &st) != 0) {
      fprintf(stderr, "lockstep: %s: %s\n", paths[i], strerror(errno));
      bad = 1;
    } else if (S_ISDIR(st.st_mode)) {
      if (list_dir(paths[i], &names, &n, &cap))
        bad = 1;
    } else if (!has_suffix(paths[i], LS_TRACE_FILE_SUFFIX LS_INDEX_SUFFIX)) { /* an index goes with its trace */
      if (n == cap) {
        cap = cap ? cap * 2 : 16;
        names = ls_xrealloc(names, cap * sizeof *names);
      }
      names[n++] = strdup(paths[i]);
    }
  }
  if (npaths == 0) {
    fprintf(stderr, "lockstep: no trace files given\n");
    bad = 1;
  }
  set->traces = calloc(n ? n : 1, sizeof *set->traces);
  struct loader ld = {names, n, set->traces, ls_xrealloc(NULL, (n ? n : 1) * sizeof *ld.err),
                      ls_xrealloc(NULL, n ? n : 1), indexed, 0};
  memset(ld.ok, 0, n ? n : 1);
  ls_parallel(load_some, &ld);
  /* messages in path order, whichever thread loaded what */
  for (size_t i = 0; i < n; i++) {
    if (!ld.ok[i]) {
      fprintf(stderr, "lockstep: %s: %s\n", names[i], ld.err[i]);
      bad = 1;
    } else {
      set->traces[set->n++] = set->traces[i];
    }
    free(names[i]);
  }
  free(ld.err);
  free(ld.ok);
  free(names);
  if (bad) {
    ls_trace_set_free(set);
    return -1;
  }
  return 0;
}

int ls_trace_set_load(struct ls_trace_set *set, char *const *paths, size_t npaths) {
  return set_load(set, paths, npaths, 0);
}

int ls_trace_set_load_indexed(struct ls_trace_set *set, char *const *paths, size_t npaths) {
  return set_load(set, paths, npaths, 1);
}

void ls_trace_set_free(struct ls_trace_set *set) {
  for (size_t i = 0; i < set->n; i++)
    ls_trace_free(&set->traces[i]);
  free(set->traces);
  memset(set, 0, sizeof *set);
}

const char *ls_trace_api_name(const struct ls_trace *t, const struct ls_trace_record *r) {
  return t->apis[r->api].name;
}

unsigned ls_trace_api_kind(const struct ls_trace *t, const struct ls_trace_record *r) {
  return t->apis[r->api].kind;
}

const char *ls_kind_name(unsigned kind) {
  static const char *const names[] = {
      "other",       "collective",  "p2p",          "group_start",       "group_end",  "comm_init",
      "comm_split",  "comm_finalize", "comm_destroy", "comm_abort",      "async_error_query", "rank_query",
      "size_query",  "unique_id",   "wait",         "event"};
  return kind < sizeof names / sizeof names[0] ? names[kind] : "other";
}

const struct ls_trace_module *ls_trace_module_of(const struct ls_trace *t, uint64_t pc) {
  for (uint32_t i = 0; i < t->nmodules; i++)
    if (pc >= t->modules[i].start && pc < t->modules[i].end)
      return &t->modules[i];
  return NULL;
}

uint64_t ls_trace_realtime(const struct ls_trace *t, uint64_t mono_ns) {
  return t->hdr->t0_realtime_ns + (mono_ns - t->hdr->t0_monotonic_ns);
}

int ls_trace_rank(const struct ls_trace *t) { return t->hdr->launcher_rank; }
