/* outparams.c — rank values through C library calls (rules/host.json value_flows) and a
 * pointer alias, checked with --verify; each buggy function has a uniform twin below it.
 * Not meant to run: the analysis only needs the data flow. */
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

void copied(ncclComm_t comm, float *buf, cudaStream_t s) {
  int rank, n;
  ncclCommUserRank(comm, &rank);
  memcpy(&n, &rank, sizeof n);
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s); // expected-warning{{rank-dependent-argument}}
}
void copied_uniform(ncclComm_t comm, float *buf, cudaStream_t s) {
  int nranks, n;
  ncclCommCount(comm, &nranks);
  memcpy(&n, &nranks, sizeof n);
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
}

void parsed(ncclComm_t comm, float *buf, cudaStream_t s) {
  int rank, n = 0;
  char text[32], copy[32];
  ncclCommUserRank(comm, &rank);
  sprintf(text, "%d", rank);
  strcpy(copy, text);
  sscanf(copy, "%d", &n);
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s); // expected-warning{{rank-dependent-argument}}
  long root = strtol(text, NULL, 10);
  ncclBroadcast(buf, buf, 4, ncclFloat, (int)root, comm, s); // expected-warning{{rank-dependent-argument}}
}
void parsed_uniform(ncclComm_t comm, float *buf, cudaStream_t s) {
  int rank, nranks, n = 0;
  char text[32], copy[32];
  ncclCommUserRank(comm, &rank);
  ncclCommCount(comm, &nranks);
  sprintf(text, "%d", nranks);
  strcpy(copy, text);
  sscanf(copy, "%d", &n);
  ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s);
  long root = atoi(text) - 1;
  ncclBroadcast(buf, buf, 4, ncclFloat, (int)root, comm, s);
}

void from_fd(ncclComm_t comm, float *buf, cudaStream_t s) {
  int rank, steps = 0;
  char path[64];
  ncclCommUserRank(comm, &rank);
  snprintf(path, sizeof path, "steps.%d", rank);
  int fd = open(path, 0);
  if (read(fd, &steps, sizeof steps) != sizeof steps)
    return;
  close(fd);
  for (int i = 0; i < steps; i++)
    ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s); // expected-warning{{rank-divergent-collective}}
}
void from_file(ncclComm_t comm, float *buf, cudaStream_t s) {
  int rank, steps = 0;
  char path[64];
  ncclCommUserRank(comm, &rank);
  snprintf(path, sizeof path, "steps.%d", rank);
  FILE *f = fopen(path, "rb");
  if (!f)
    return;
  if (fread(&steps, sizeof steps, 1, f) != 1)
    steps = 0;
  fclose(f);
  for (int i = 0; i < steps; i++)
    ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s); // expected-warning{{rank-divergent-collective}}
}
void from_shared_file(ncclComm_t comm, float *buf, cudaStream_t s) {
  int rank, steps = 0;
  char path[64], line[64];
  ncclCommUserRank(comm, &rank);
  snprintf(path, sizeof path, "steps.all");
  FILE *f = fopen(path, "r");
  if (!f)
    return;
  if (fgets(line, sizeof line, f))
    steps = atoi(line);
  fclose(f);
  for (int i = 0; i < steps; i++)
    ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s);
}

void through_alias(ncclComm_t comm, float *buf, cudaStream_t s) {
  int r = 0;
  int *p = &r;
  ncclCommUserRank(comm, p);
  if (r == 0)
    ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s); // expected-warning{{rank-divergent-collective}}
}
void through_alias_uniform(ncclComm_t comm, float *buf, cudaStream_t s) {
  int n = 0, r = 0;
  int *p = &n;
  ncclCommCount(comm, p);
  ncclCommUserRank(comm, &r);
  if (n > 1)
    ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, s);
}
