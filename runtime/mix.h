/* mix.h — splitmix64's finalizer, the one 64-bit mixer of the recorder's hashes
 * (communicator ids, its hash tables) and the trace index's first digest. What it
 * computes is in the traces and indexes already written: change it only with their
 * format versions. Header-only, inline: the recorder's call path uses it. */
#ifndef LOCKSTEP_MIX_H
#define LOCKSTEP_MIX_H

#include <stdint.h>

static inline uint64_t ls_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

#endif
