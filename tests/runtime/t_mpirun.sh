# `lockstep run` in front of mpirun: every rank inherits the preload and writes its
# own trace; `lockstep compare` finds them consistent. Skipped (77) without mpirun.
. "$(dirname "$0")/lib.sh"
command -v mpirun > /dev/null || { echo "no mpirun: skipped"; exit 77; }
unset LOCKSTEP_TRACE_DIR
cd "$T" || fail cd
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
"$LS_BIN" run --trace-dir tr -- mpirun -np 3 -x LS_TEST_UID=mpi -x LD_LIBRARY_PATH="$LS_FAKECUDA" \
  "$LS_PROG" basic > "$T/out" 2>&1 || fail "mpirun under lockstep run failed: $(cat "$T/out")"
[ "$(ls tr/*.lstrace | wc -l)" -eq 3 ] || fail "expected 3 traces (one per rank, none for mpirun): $(ls tr)"
for f in tr/*.lstrace; do "$LS_DUMP" "$f" > "$f.txt" || fail "dump $f"; done
cat tr/*.txt | grep '^header' | kv rank | sort | tr '\n' ' ' | grep -q '^0 1 2 $' || fail "launcher ranks not 0 1 2"
"$LS_BIN" compare tr > "$T/cmp" 2>&1
[ $? -eq 0 ] || fail "compare did not find the ranks consistent: $(cat "$T/cmp")"
echo ok
