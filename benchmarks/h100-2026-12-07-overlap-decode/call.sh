#!/usr/bin/env bash
# One call for both open issues: the overlapped attention rings (ws-ov, pp-ov) checked (20 runs a
# control) and timed beside SDPA; the GEMM decode tiles (split-K on cp.async, swapped wgmma) checked
# and timed beside cuBLAS at the decode shapes; then, time allowing, the attention rungs traced and
# fp32. Summary lines land in $OUT/S.txt as they are measured.
set -u
L=${LIMIT:-540}  # seconds this call may take; each step below starts only with room left for it
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; room() { [ $(( $(el) + $1 )) -lt $L ]; }
export PATH=/usr/local/cuda/bin:$PATH
B=$PWD/target/release/tilepipe; O=$OUT/s; mkdir -p $O; T=$OUT/S.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; date -u; } > $T
timeout 170 $B check --workload attention --dtypes bf16 --variants tma-wgmma-ws,tma-wgmma-pp,ctl-tma-wgmma --runs 20 --out $O/cab > $O/cab.log 2>&1 &
timeout 170 $B check --workload attention --dtypes f16 --variants tma-wgmma-ws,tma-wgmma-pp,ctl-tma-wgmma --runs 20 --out $O/caf > $O/caf.log 2>&1 &
timeout 170 $B check --workload gemm --dtypes bf16 --layouts nk --variants cpasync-cg16-s4-sk,cpasync-cg16-s6-sk,tma-wgmma-sk --runs 3 --out $O/cg > $O/cg.log 2>&1 &
wait
echo "checks $(el) s" >> $T
for f in cab caf cg; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1)"; grep -E '^FAIL' $O/$f.log | cut -c1-300 | head -10; echo "controls ok $(grep -cE '^ok +control' $O/$f.log) fail $(grep -cE '^FAIL +control' $O/$f.log)"; grep -E "ov-early" $O/$f.log | cut -c1-300 | head -3; } >> $T; done
rm -rf $O/cab $O/caf $O/cg
tbl() { grep -vE "^\[" $1 | grep -E "^│ [a-zA-Z]|FAIL|error|skip|clocks|repeatab" | cut -c1-220 | head -44; }
run() { n=$1; shift; timeout $1 $B run --workload attention --variants tma-wgmma-ws,tma-wgmma-pp --peers torch "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n/timelines $O/$n/report.html; }
room 60 && run a4k 60
room 70 && run a16k 70 --batch 1 --seqlen 16384
H=cpasync-cg16-s4-sk,cpasync-cg16-s6-sk,tma-wgmma-sk,tma-wgmma-ws-s4,cpasync-cg16-s4-128x128x32-8w-2b
for s in "16 14336 4096" "16 4096 14336" "128 14336 4096" "128 4096 14336"; do
  room 45 || break
  set -- $s; n=d$1-$2-$3
  timeout 45 $B run --workload gemm --dtype bf16 --layout nk --m $1 --n $2 --k $3 --variants $H --out $O/$n > $O/$n.log 2>&1
  echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n/timelines $O/$n/report.html
done
room 40 && run a4kc 40 --causal
room 50 && run a16kc 50 --batch 1 --seqlen 16384 --causal
room 45 && { timeout 45 $B timeline tma-wgmma-ws-s2 tma-wgmma-pp-s2 tma-wgmma-ws-ov-s2 tma-wgmma-pp-ov-s2 --workload attention --out $O/tl > $O/tl.log 2>&1; echo "--- timeline exit $? at $(el) s" >> $T; grep -vE "^\[" $O/tl.log | tail -12 >> $T; }
echo "total $(el) s" >> $T
tar czf $OUT/s.tgz -C $O .
