#!/usr/bin/env python3
"""big_function.py — one long function, checked with `lockstep lint --verify`.

usage: big_function.py LOCKSTEP OUT.c [UNITS]
Writes a function of UNITS (default 400) blocks, each with a rank-dependent collective, a
rank-dependent count, and constructs that must stay silent (both sides of a rank branch
issue the same collective, a loop with a uniform trip count), annotated with the findings
each must give, then runs `lockstep lint --verify` on it and exits with its status. The
function's conversion passes the point (convert.c's T_BIG, 8192 entries) after which the body's
statements are converted one at a time and dropped from the table: a block lost, read
twice or read with another block's children shows as a missing or unexpected finding.
"""
import subprocess
import sys


def unit(u):
    return f"""  {{ /* block {u} */
    int v_{u} = rank + {u};
    if (rank == 0) {{
      ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s); // expected-warning{{{{rank-divergent-collective}}}}
    }}
    if (v_{u} > 3)
      ncclBroadcast(buf, buf, n, ncclFloat, 0, comm, s);
    else
      ncclBroadcast(buf2, buf, n, ncclFloat, 0, comm, s);
    for (int i_{u} = 0; i_{u} < n; i_{u}++) {{
      ncclAllReduce(buf2, buf2, n, ncclFloat, ncclMax, comm, s);
    }}
    ncclAllReduce(buf, buf, (size_t)v_{u}, ncclFloat, ncclSum, comm, s); // expected-warning{{{{rank-dependent-argument}}}}
  }}
"""


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    units = int(argv[3]) if len(argv) == 4 else 400
    with open(argv[2], "w") as out:
        out.write("#include <stddef.h>\n#include <nccl.h>\n\n"
                  "void big(ncclComm_t comm, cudaStream_t s, float *buf, float *buf2, size_t n) {\n"
                  "  int rank;\n  ncclCommUserRank(comm, &rank);\n")
        for u in range(units):
            out.write(unit(u))
        out.write("}\n")
    r = subprocess.run([argv[1], "lint", "--verify", argv[2], "--", "-I/usr/local/cuda/include"])
    return r.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
