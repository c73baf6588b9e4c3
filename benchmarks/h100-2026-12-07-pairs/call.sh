#!/usr/bin/env bash
# The paired persistent walk checked and timed beside cuDNN (causal and not, 4096 and 16384), the
# rest of the bf16 [N x K] set at M 8192, Nsight Compute on the warp-specialised split-K tile and
# the persistent attention ring.
set -u
L=${LIMIT:-420}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; room() { [ $(( $(el) + $1 )) -lt $L ]; }
export PATH=/usr/local/cuda/bin:$PATH
B=$PWD/target/release/tilepipe; O=$OUT/r; mkdir -p $O; T=$OUT/R.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; date -u; } > $T
tbl() { grep -vE "^\[" $1 | grep -E "^│ [a-zA-Z]|FAIL|error|skip|clocks|repeatab|matched|ladder|step" | grep -v "┆ attested" | cut -c1-220 | head -40; }
summ() { for f in "$@"; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1) at $(el) s"; grep -E '^FAIL' $O/$f.log | cut -c1-300 | head -12; echo "controls ok $(grep -cE '^ok +control' $O/$f.log) fail $(grep -cE '^FAIL +control' $O/$f.log)"; } >> $T; rm -rf $O/$f; done; }
AV=tma-wgmma-ws-ov-s3,tma-wgmma-pp-ov-s3,tma-wgmma-ws-ov-persist-s3,tma-wgmma-ws-ov-persist-s2
arun() { n=$1; shift; timeout $1 $B run --workload attention --variants sync,$AV --peers torch "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n/timelines $O/$n/report.html; }
grun() { n=$1; shift; timeout $1 $B run --workload gemm "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n/timelines $O/$n/report.html; }
timeout 150 $B check --workload attention --dtypes bf16 --variants tma-wgmma-ws-s2,tma-wgmma-ws-ov-persist,ctl-tma-wgmma-ov-early-release --out $O/cab > $O/cab.log 2>&1 &
timeout 150 $B check --workload attention --dtypes f16 --variants tma-wgmma-ws-s2,tma-wgmma-ws-ov-persist --out $O/caf > $O/caf.log 2>&1 &
wait
summ cab caf
room 50 && arun a16kc 50 --batch 1 --seqlen 16384 --causal
room 40 && arun a4kc 40 --causal
room 40 && arun a4k 40
room 50 && arun a16k 50 --batch 1 --seqlen 16384
V=tma-wgmma-ws-s4,tma-wgmma-ws-st-s4,tma-wgmma-ws-mc2-st-s4,tma-wgmma-ws-persist-mc2-st-s4
for s in "8192 4096 4096" "8192 14336 4096" "8192 4096 14336" "8192 14336 14336"; do
  room 40 || break
  set -- $s; grun g$1-$2-$3 40 --dtype bf16 --layout nk --m $1 --n $2 --k $3 --variants $V
done
room 60 && { timeout 60 ncu --clock-control none -k regex:tilepipe_gemm --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy --section SchedulerStats $B probe tma-wgmma-ws-sk-s4 --workload gemm --dtype bf16 --layout nk --m 128 --n 14336 --k 4096 > $O/ncu-wssk.log 2>&1; echo "--- ncu ws-sk exit $? at $(el) s" >> $T; grep -vE "^\[|^==PROF==" $O/ncu-wssk.log | grep -E "[0-9]" | head -80 >> $T; }
NS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats"
room 70 && { timeout 70 ncu --clock-control none -k regex:tilepipe_attention --launch-count 1 $NS $B probe tma-wgmma-ws-ov-persist-s3 --workload attention --batch 4 --heads 16 --seqlen 4096 --head-dim 128 --dtype bf16 > $O/ncu-attn.log 2>&1; echo "--- ncu attention exit $? at $(el) s" >> $T; grep -vE "^\[|^==PROF==" $O/ncu-attn.log | grep -E "[0-9]" | head -90 >> $T; }
echo "total $(el) s" >> $T
tar czf $OUT/r.tgz -C $O .
