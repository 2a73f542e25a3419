/* online/siphash.c — SipHash-2-4 (keyed: the per-job secret LOCKSTEP_JOB_SECRET is the
 * key) and the MAC every side-channel message carries. Pure computation; owns nothing. */
#include <string.h>

#include "online.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                           \
  do {                                                                                     \
    v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);                              \
    v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                                 \
    v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                                 \
    v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);                              \
  } while (0)

uint64_t ls_siphash(const uint64_t k[2], const void *data, size_t len) {
  const unsigned char *p = data;
  uint64_t v0 = 0x736f6d6570736575ull ^ k[0], v1 = 0x646f72616e646f6dull ^ k[1];
  uint64_t v2 = 0x6c7967656e657261ull ^ k[0], v3 = 0x7465646279746573ull ^ k[1];
  uint64_t b = (uint64_t)len << 56;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t m;
    memcpy(&m, p + i, 8);
    v3 ^= m;
    SIPROUND;
    SIPROUND;
    v0 ^= m;
  }
  for (size_t j = 0; i + j < len; j++)
    b |= (uint64_t)p[i + j] << (8 * j);
  v3 ^= b;
  SIPROUND;
  SIPROUND;
  v0 ^= b;
  v2 ^= 0xff;
  SIPROUND;
  SIPROUND;
  SIPROUND;
  SIPROUND;
  return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t ls_on_mac(const void *msg, size_t size, uint64_t comm, int rank) {
  unsigned char buf[160];
  size_t n = size - sizeof(uint64_t);
  memcpy(buf, &comm, 8);
  int64_t r = rank;
  memcpy(buf + 8, &r, 8);
  memcpy(buf + 16, msg, n);
  return ls_siphash(ls_on.key, buf, n + 16);
}
