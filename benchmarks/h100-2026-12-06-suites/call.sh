#!/usr/bin/env bash
# the full suites after the built-in view shift (RMSNorm bf16, f32) and the ping-pong / 3-stage
# attention rings (attention bf16, f16), side by side; summaries in $OUT/G.txt
set -u
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
export PATH=/usr/local/cuda/bin:$PATH
B=$PWD/target/release/tilepipe; O=$OUT/g; mkdir -p $O; T=$OUT/G.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; date -u; } > $T
for dt in bf16 f32; do timeout 480 $B check --dtypes $dt --out $O/r$dt > $O/rms-$dt.log 2>&1 & done
for dt in bf16 f16; do timeout 480 $B check --workload attention --dtypes $dt --out $O/a$dt > $O/att-$dt.log 2>&1 & done
wait
echo "checks $(el) s" >> $T
for f in rms-bf16 rms-f32 att-bf16 att-f16; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1)"; grep -E '^FAIL' $O/$f.log | cut -c1-300 | head -8; echo "controls ok $(grep -cE '^ok +control' $O/$f.log) fail $(grep -cE '^FAIL +control' $O/$f.log)"; } >> $T; done
rm -rf $O/rbf16 $O/rf32 $O/abf16 $O/af16
tar -C $OUT -czf $OUT/g.tgz g
cat $T
