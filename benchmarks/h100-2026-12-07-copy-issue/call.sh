#!/usr/bin/env bash
# cp.async zero-fill through the ignore-src predicate and no select of the zero source (d1b0113)
# against the build before (e93c6a1,
# target/ab/tilepipe-old): the cp.async suites of GEMM (bf16, f32), attention and RMSNorm with their
# controls, then mma.sync and f32 GEMM and cp.async attention timed old/new in alternation.
set -u
L=${LIMIT:-470}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; room() { [ $(( $(el) + $1 )) -lt $L ]; }
B=$PWD/target/release/tilepipe; A=/tmp/tilepipe-old; gunzip -c target/ab/tilepipe-old.gz > $A; chmod +x $A; O=$OUT/r; mkdir -p $O; T=$OUT/R.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; $A --version; date -u; } > $T
tbl() { grep -vE "^\[" $1 | grep -E "^│ [a-zA-Z]|FAIL|error|CLOCKS|repeatab" | grep -vE "┆ attested|^│ (swap|s[23]|variant  *┆ regs|step) |skipped" | cut -c1-200 | head -16; }
summ() { for f in "$@"; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1) at $(el) s"; grep -E '^FAIL|^ok   control' $O/$f.log | cut -c1-220 | head -40; } >> $T; done; }
wrun() { n=$1; bin=$2; shift 2; timeout $1 $bin run "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n ($($bin --version)) exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n; }
GC=cpasync,ctl-skip-wait,ctl-early-release,ctl-wait-short,ctl-no-barrier,ctl-overfill,ctl-commit-after-wait,ctl-drain-no-commit
timeout 200 $B check --workload gemm --dtypes bf16,f32 --variants $GC --out $O/cg > $O/cg.log 2>&1 &
timeout 200 $B check --workload attention --dtypes bf16 --variants cpasync,ctl-skip-wait,ctl-early-release --out $O/ca > $O/ca.log 2>&1 &
timeout 200 $B check --workload rmsnorm --dtypes bf16 --variants cpasync,ctl-cpasync --out $O/cr > $O/cr.log 2>&1 &
wait
summ cg ca cr
M4="--workload gemm --dtype bf16 --layout nk --m 4096 --n 4096 --k 4096 --variants cpasync-cg16-s4,cpasync-cg16-s3,cpasync-cg16-s4-128x256x64-8w"
F4="--workload gemm --dtype f32 --layout kn --m 4096 --n 4096 --k 4096 --variants cpasync-cg16-s4,cpasync-cg16-s4-128x128x32-8w"
M8="--workload gemm --dtype bf16 --layout nk --m 8192 --n 8192 --k 8192 --variants cpasync-cg16-s4"
AT="--workload attention --variants cpasync-cg16-s3,cpasync-cg16-s2"
for r in 1 2; do
  room 25 && wrun m4-old$r $A 25 $M4; room 25 && wrun m4-new$r $B 25 $M4
  room 30 && wrun f4-old$r $A 30 $F4; room 30 && wrun f4-new$r $B 30 $F4
done
room 40 && wrun m8-new $B 40 $M8; room 40 && wrun m8-old $A 40 $M8
room 30 && wrun at-old $A 30 $AT; room 30 && wrun at-new $B 30 $AT
room 40 && wrun m4-tiles $B 40 --workload gemm --dtype bf16 --layout nk --m 4096 --n 4096 --k 4096 --variants cpasync-cg16-s4,cpasync-cg16-s3-128x128x64-4w,cpasync-cg16-s4-128x128x64-4w,cpasync-cg16-s3-128x256x64-8w
room 50 && wrun m8-tiles $B 50 --workload gemm --dtype bf16 --layout nk --m 8192 --n 8192 --k 8192 --variants cpasync-cg16-s4,cpasync-cg16-s3-128x128x64-4w,cpasync-cg16-s4-128x256x64-8w
echo "total $(el) s" >> $T
cp $O/cg.log $OUT/cg.log; cp $O/cr.log $OUT/cr.log
tar czf $OUT/r.tgz -C $O .
