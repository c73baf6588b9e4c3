#!/usr/bin/env bash
# One call, most needed first, each step while time is left: the suites of what is new (attention
# bf16 every variant, the persistent ring in f16, the warp-specialised split-K tile, the f32
# 16 x 8 register tiles, every split-K tile after the reduction's change), the decode shapes beside cuBLAS, attention beside SDPA (4096, 16384,
# causal, head dim 64), the bf16 [N x K] set beside cuBLAS, f32 and mma.sync, Nsight Compute.
set -u
L=${LIMIT:-400}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; room() { [ $(( $(el) + $1 )) -lt $L ]; }
export PATH=/usr/local/cuda/bin:$PATH
B=$PWD/target/release/tilepipe; O=$OUT/r; mkdir -p $O; T=$OUT/R.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; date -u; } > $T
tbl() { grep -vE "^\[" $1 | grep -E "^│ [a-zA-Z]|FAIL|error|skip|clocks|repeatab|matched|ladder|step" | cut -c1-220 | head -70; }
summ() { for f in "$@"; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1) at $(el) s"; grep -E '^FAIL' $O/$f.log | cut -c1-300 | head -12; echo "controls ok $(grep -cE '^ok +control' $O/$f.log) fail $(grep -cE '^FAIL +control' $O/$f.log)"; } >> $T; rm -rf $O/$f; done; }
arun() { n=$1; shift; timeout $1 $B run --workload attention --variants sync,tma-wgmma-ws,tma-wgmma-pp --peers torch "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n/timelines $O/$n/report.html; }
grun() { n=$1; shift; timeout $1 $B run --workload gemm "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n/timelines $O/$n/report.html; }
SK=cpasync-cg16-s4-sk,cpasync-cg16-s6-sk,tma-wgmma-sk,tma-wgmma-ws-sk
timeout ${CT:-200} $B check --workload attention --dtypes bf16 --out $O/cab > $O/cab.log 2>&1 &
timeout ${CT:-200} $B check --workload attention --dtypes f16 --variants sync,tma-wgmma-ws-s2,tma-wgmma-ws-ov-persist,ctl-tma-wgmma-ov-early-release --out $O/caf > $O/caf.log 2>&1 &
timeout ${CT:-150} $B check --workload gemm --dtypes bf16 --variants $SK --runs 3 --out $O/cwb > $O/cwb.log 2>&1 &
timeout ${CT:-150} $B check --workload gemm --dtypes f16 --variants $SK --runs 3 --out $O/cwf > $O/cwf.log 2>&1 &
timeout ${CT:-150} $B check --workload gemm --dtypes f32 --variants cpasync-cg16-s4-128x128x16-4w-2b,cpasync-cg16-s3-128x128x16-4w-2b,cpasync-cg16-s4-128x256x16-8w,cpasync-cg16-s3-128x256x16-8w --runs 3 --out $O/cf32 > $O/cf32.log 2>&1 &
wait
summ cab caf cwb cwf cf32
for s in "16 14336 4096" "16 4096 14336" "128 14336 4096" "128 4096 14336"; do
  room 30 || break
  set -- $s; grun d$1-$2-$3 30 --dtype bf16 --layout nk --m $1 --n $2 --k $3 --variants $SK,tma-wgmma-ws-s4
done
room 60 && arun a4k 60
room 70 && arun a16k 70 --batch 1 --seqlen 16384
V=tma-wgmma-ws-s4,tma-wgmma-ws-st-s4,tma-wgmma-ws-mc2-st-s4,tma-wgmma-ws-persist-mc2-st-s4
for s in "4096 4096 4096" "8192 8192 8192"; do
  room 40 || break
  set -- $s; grun g$1-$2-$3 40 --dtype bf16 --layout nk --m $1 --n $2 --k $3 --variants $V
done
room 60 && grun f32 60 --dtype f32 --m 4096 --n 4096 --k 4096 --variants sync,cpasync
room 45 && arun a4kc 45 --causal
room 50 && arun a16kc 50 --batch 1 --seqlen 16384 --causal
room 40 && arun a4k-d64 40 --head-dim 64
for s in "4096 14336 4096" "4096 4096 14336" "4096 14336 14336" "8192 4096 4096" "8192 14336 4096" "8192 4096 14336" "8192 14336 14336"; do
  room 40 || break
  set -- $s; grun g$1-$2-$3 40 --dtype bf16 --layout nk --m $1 --n $2 --k $3 --variants $V
done
room 50 && grun mma 50 --dtype bf16 --layout nk --m 8192 --n 8192 --k 8192 --variants sync,cpasync
NS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats"
room 90 && { timeout 90 ncu --clock-control none -k regex:tilepipe_attention --launch-count 1 $NS $B probe tma-wgmma-ws-ov-s3 --workload attention --batch 4 --heads 16 --seqlen 4096 --head-dim 128 --dtype bf16 > $O/ncu-attn.log 2>&1; echo "--- ncu attention exit $? at $(el) s" >> $T; grep -vE "^\[|^==PROF==" $O/ncu-attn.log | grep -E "[0-9]" | head -90 >> $T; }
room 60 && { timeout 60 ncu --clock-control none -k regex:tilepipe_gemm --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy $B probe tma-wgmma-sk-s8-16x128x64-4w-swap --workload gemm --dtype bf16 --layout nk --m 16 --n 4096 --k 14336 > $O/ncu-dec.log 2>&1; echo "--- ncu decode exit $? at $(el) s" >> $T; grep -vE "^\[|^==PROF==" $O/ncu-dec.log | grep -E "[0-9]" | head -70 >> $T; }
echo "total $(el) s" >> $T
tar czf $OUT/r.tgz -C $O .
