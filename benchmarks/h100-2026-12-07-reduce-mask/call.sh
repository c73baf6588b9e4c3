#!/usr/bin/env bash
# Part A: the split-K decode tiles (the reduction a plane at a time) checked in bf16 and f16 and
# the attention bodies (the mask only on the key tiles that need it) checked in bf16 (every variant)
# and f16; the four decode shapes beside cuBLAS; attention 4096 beside SDPA.
# Part B: attention 16384 and the causal runs beside SDPA; Nsight Compute on the overlapped ring.
set -u
L=${LIMIT:-560}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; room() { [ $(( $(el) + $1 )) -lt $L ]; }
export PATH=/usr/local/cuda/bin:$PATH
B=$PWD/target/release/tilepipe; P=${1:-A}; O=$OUT/$P; mkdir -p $O; T=$OUT/$P.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; date -u; } > $T
tbl() { grep -vE "^\[" $1 | grep -E "^│ [a-zA-Z]|FAIL|error|skip|clocks|repeatab|matched" | cut -c1-220 | head -60; }
summ() { for f in "$@"; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1) at $(el) s"; grep -E '^FAIL' $O/$f.log | cut -c1-300 | head -12; echo "controls ok $(grep -cE '^ok +control' $O/$f.log) fail $(grep -cE '^FAIL +control' $O/$f.log)"; } >> $T; rm -rf $O/$f; done; }
arun() { n=$1; shift; timeout $1 $B run --workload attention --variants sync,tma-wgmma-ws,tma-wgmma-pp --peers torch "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n/timelines $O/$n/report.html; }
if [ $P = A ]; then
  SK=cpasync-cg16-s4-sk,cpasync-cg16-s6-sk,tma-wgmma-sk
  timeout 230 $B check --workload attention --dtypes bf16 --out $O/cab > $O/cab.log 2>&1 &
  timeout 230 $B check --workload attention --dtypes f16 --variants sync,cpasync,tma-wgmma-ws,ctl-mask-shifted,ctl-no-rescale,ctl-tma-wgmma --out $O/caf > $O/caf.log 2>&1 &
  timeout 150 $B check --workload gemm --dtypes bf16 --variants $SK --runs 3 --out $O/cgb > $O/cgb.log 2>&1 &
  timeout 150 $B check --workload gemm --dtypes f16 --variants $SK --runs 3 --out $O/cgf > $O/cgf.log 2>&1 &
  wait
  summ cab caf cgb cgf
  H=$SK,tma-wgmma-ws-s4,tma-wgmma-ws-persist-s4
  for s in "16 14336 4096" "16 4096 14336" "128 14336 4096" "128 4096 14336"; do
    room 50 || break
    set -- $s; n=d$1-$2-$3
    timeout 50 $B run --workload gemm --dtype bf16 --layout nk --m $1 --n $2 --k $3 --variants $H --out $O/$n > $O/$n.log 2>&1
    echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n/timelines $O/$n/report.html
  done
  room 60 && arun a4k 60
  room 45 && arun a4kc 45 --causal
else
  timeout 90 $B check --workload gemm --dtypes bf16 --variants tma-wgmma-ws-sk --runs 3 --out $O/cwb > $O/cwb.log 2>&1 &
  timeout 90 $B check --workload gemm --dtypes f16 --variants tma-wgmma-ws-sk --runs 3 --out $O/cwf > $O/cwf.log 2>&1 &
  wait
  summ cwb cwf
  for s in "128 4096 14336" "128 14336 4096"; do
    room 40 || break
    set -- $s; n=w$1-$2-$3
    timeout 40 $B run --workload gemm --dtype bf16 --layout nk --m $1 --n $2 --k $3 --variants tma-wgmma-ws-sk,tma-wgmma-sk-s4-64,tma-wgmma-sk-s6-64,tma-wgmma-ws-s4 --out $O/$n > $O/$n.log 2>&1
    echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n/timelines $O/$n/report.html
  done
  room 80 && arun a16k 80 --batch 1 --seqlen 16384
  NS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats"
  room 100 && { timeout 100 ncu --clock-control none -k regex:tilepipe_attention --launch-count 1 $NS $B probe tma-wgmma-ws-ov-s3 --workload attention --batch 4 --heads 16 --seqlen 4096 --head-dim 128 --dtype bf16 > $O/ncu-attn.log 2>&1; echo "--- ncu attention exit $? at $(el) s" >> $T; grep -vE "^\[|^==PROF==" $O/ncu-attn.log | grep -E "[0-9]" | head -90 >> $T; }
  room 60 && arun a16kc 60 --batch 1 --seqlen 16384 --causal
  for sh in "16 4096 14336" "16 14336 4096"; do
    set -- $sh; room 60 || break
    timeout 60 ncu --clock-control none -k regex:tilepipe_gemm --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy $B probe tma-wgmma-sk-s8-16x128x64-4w-swap --workload gemm --dtype bf16 --layout nk --m $1 --n $2 --k $3 > $O/ncu-d$2.log 2>&1; echo "--- ncu decode $1 $2 $3 exit $? at $(el) s" >> $T; grep -vE "^\[|^==PROF==" $O/ncu-d$2.log | grep -E "[0-9]" | head -70 >> $T
  done
  room 40 && arun a4k-d64 40 --head-dim 64
fi
echo "total $(el) s" >> $T
tar czf $OUT/$P.tgz -C $O .
