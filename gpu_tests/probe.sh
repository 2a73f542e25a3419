#!/usr/bin/env bash
# probe.sh — facts about the GPU machine the suite depends on, printed for the log:
# GPUs and links, toolchain, NCCL, PyTorch, and whether an LD_PRELOAD set in front of
# mpirun / torchrun reaches the ranks (that is how `lockstep run` gets in).
# Never fails; each line says what it found.
set -u
echo "== gpus"; nvidia-smi -L 2>&1; nvidia-smi topo -m 2>&1 | head -8
echo "== tools"; for t in nvcc mpicc mpirun torchrun python3 cmake ninja gcc; do printf '%s: %s\n' "$t" "$(command -v $t || echo missing)"; done
nvcc --version 2>&1 | tail -1; gcc --version | head -1; mpirun --version 2>&1 | head -1
echo "== nccl"; ls -la /usr/lib/x86_64-linux-gnu/libnccl* 2>&1; grep -h -E '^#define NCCL_(MAJOR|MINOR|PATCH)' /usr/include/nccl.h 2>&1
echo "== env"; env | grep -E '^(NCCL|TORCH|NVSHMEM|CUDA|OMPI)' | sort
echo "== torch"; python3 -c "import torch,torch.distributed as d;print(torch.__version__,'gpus',torch.cuda.device_count(),'nccl',torch.cuda.nccl.version(),'set_debug_level',hasattr(d,'set_debug_level'))" 2>&1 | tail -2
tmp=$(mktemp -d)
printf '#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n__attribute__((constructor)) static void c(void){ const char *r = getenv("OMPI_COMM_WORLD_RANK"); if (!r) r = getenv("RANK"); fprintf(stderr, "preload reached pid %%d rank %%s\\n", getpid(), r ? r : "-"); }\n' >"$tmp/p.c"
gcc -shared -fPIC "$tmp/p.c" -o "$tmp/p.so" 2>&1
echo "== mpirun as root, env + LD_PRELOAD inheritance"
GT_PROBE=42 LD_PRELOAD=$tmp/p.so timeout 60 mpirun -np "${1:-2}" --allow-run-as-root --bind-to none sh -c 'echo "rank $OMPI_COMM_WORLD_RANK probe=$GT_PROBE nvls=$NCCL_NVLS_ENABLE"' 2>&1 | sort | uniq -c
echo "== torchrun, LD_PRELOAD inheritance"
LD_PRELOAD=$tmp/p.so timeout 60 torchrun --standalone --nproc-per-node="${1:-2}" --no-python sh -c 'echo "torchrun rank $RANK of $WORLD_SIZE"' 2>&1 | grep -v '^\s*$' | sort | uniq -c | head -20
rm -rf "$tmp"
exit 0
