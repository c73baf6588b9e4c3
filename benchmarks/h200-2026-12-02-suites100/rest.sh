#!/usr/bin/env bash
# The mutant trees whose verdicts did not come back, then the main job; all packed under $OUT.
set -u
export PATH=/usr/local/cuda/bin:$PATH
D=/tmp/rest; mkdir -p $D
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv; ./target/release/tilepipe --version; nproc; } > $OUT/info.txt 2>&1
for m in ring-no-init-fence fault-cpasync sync-no-release-barrier cpasync-drain-one-short regprefetch-no-publish-barrier; do
  TILEPIPE_BIN=$PWD/target/release/tilepipe timeout ${MUT_LIMIT:-240} scripts/mutants.sh $D/$m $m > $D/$m.log 2>&1 &
done
wait
for m in $D/*.log; do echo "== $m"; grep -E "^===|^  (check|run|clean)" $m | cut -c1-220; done | tee $OUT/mutants-summary.txt
tar -C $D -czf $OUT/mutants.tgz --exclude='k-*' .
date -u >> $OUT/info.txt
mkdir -p $D/run
timeout ${RUN_LIMIT:-240} ./target/release/tilepipe run --out $D/run > $D/run/run.log 2>&1
echo "run exit $?"
grep -E "^│ [a-zA-Z]|ceiling|passed, |FAIL|error" $D/run/run.log | cut -c1-200 | tail -30
tar -C $D -czf $OUT/run.tgz run
