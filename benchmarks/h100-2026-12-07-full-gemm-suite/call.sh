#!/usr/bin/env bash
# The whole GEMM suite on 2fcfe76 (every build, f32/f16/bf16, both layouts, every control at 20
# runs), three precisions side by side; then f32 4096^3 timed against d1b0113
# (target/ab/tilepipe-old) in alternation.
set -u
L=${LIMIT:-560}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; room() { [ $(( $(el) + $1 )) -lt $L ]; }
B=$PWD/target/release/tilepipe; A=/tmp/tilepipe-old; gunzip -c target/ab/tilepipe-old.gz > $A; chmod +x $A; O=$OUT/r; mkdir -p $O; T=$OUT/R.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; $A --version; date -u; } > $T
tbl() { grep -vE "^\[" $1 | grep -E "^│ [a-zA-Z]|FAIL|error|CLOCKS|repeatab" | grep -vE "┆ attested|^│ (b|variant  *┆ regs|step) |skipped" | cut -c1-200 | head -12; }
summ() { for f in "$@"; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1) at $(el) s"; grep -E '^FAIL' $O/$f.log | cut -c1-220 | head -20; echo "control lines 20/20: $(grep -c '^ok   control.*20/20' $O/$f.log), other control lines: $(grep '^ok   control' $O/$f.log | grep -vc '20/20')"; grep -E '^ok   control' $O/$f.log | grep -v '20/20' | cut -c1-200 | head; } >> $T; done; }
wrun() { n=$1; bin=$2; shift 2; timeout $1 $bin run "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n ($($bin --version)) exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n; }
for d in f32 f16 bf16; do timeout 390 $B check --workload gemm --dtypes $d --out $O/c$d > $O/c$d.log 2>&1 & done
wait
summ cf32 cf16 cbf16
F4="--workload gemm --dtype f32 --layout kn --m 4096 --n 4096 --k 4096 --variants cpasync-cg16-s4,cpasync-cg16-s4-128x128x32-8w,cpasync-cg16-s4-128x256x16-8w"
for r in 1 2; do room 25 && wrun f4-old$r $A 25 $F4; room 25 && wrun f4-new$r $B 25 $F4; done
echo "total $(el) s" >> $T
for d in f32 f16 bf16; do gzip -c $O/c$d.log > $OUT/c$d.log.gz; done
tar czf $OUT/r.tgz -C $O .
