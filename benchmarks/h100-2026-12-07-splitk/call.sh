#!/usr/bin/env bash
# The split-K reduction rebuilt (partials in the threads' own order) and the warp-specialised
# split-K tile on 128 x 128: every split-K tile checked in bf16 and f16 (3 runs), the four decode
# shapes beside cuBLAS, Nsight Compute on the new warp-specialised tile at 128 x 4096 x 14336.
set -u
L=${LIMIT:-300}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; room() { [ $(( $(el) + $1 )) -lt $L ]; }
export PATH=/usr/local/cuda/bin:$PATH
B=$PWD/target/release/tilepipe; O=$OUT/r; mkdir -p $O; T=$OUT/R.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; date -u; } > $T
tbl() { grep -vE "^\[" $1 | grep -E "^│ [a-zA-Z]|FAIL|error|skip|clocks|repeatab|matched|ladder|step" | grep -v "┆ attested" | cut -c1-220 | head -45; }
summ() { for f in "$@"; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1) at $(el) s"; grep -E '^FAIL' $O/$f.log | cut -c1-300 | head -12; } >> $T; rm -rf $O/$f; done; }
grun() { n=$1; shift; timeout $1 $B run --workload gemm "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n/timelines $O/$n/report.html; }
SK=cpasync-cg16-s4-sk,cpasync-cg16-s6-sk,tma-wgmma-sk,tma-wgmma-ws-sk
timeout 150 $B check --workload gemm --dtypes bf16 --variants $SK --runs 3 --out $O/cwb > $O/cwb.log 2>&1 &
timeout 150 $B check --workload gemm --dtypes f16 --variants $SK --runs 3 --out $O/cwf > $O/cwf.log 2>&1 &
wait
summ cwb cwf
for s in "128 4096 14336" "16 4096 14336" "128 14336 4096" "16 14336 4096"; do
  room 30 || break
  set -- $s; grun d$1-$2-$3 30 --dtype bf16 --layout nk --m $1 --n $2 --k $3 --variants $SK,tma-wgmma-ws-s4
done
room 45 && { timeout 45 ncu --clock-control none -k regex:tilepipe_gemm --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy $B probe tma-wgmma-ws-sk-s6-128x128x64-8w --workload gemm --dtype bf16 --layout nk --m 128 --n 4096 --k 14336 > $O/ncu-wssk.log 2>&1; echo "--- ncu ws-sk exit $? at $(el) s" >> $T; grep -vE "^\[|^==PROF==" $O/ncu-wssk.log | grep -E "[0-9]" | grep -vE "^ +[A-Z][a-z].*[a-z] *$" | head -45 >> $T; }
NS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section Occupancy --section LaunchStats"
room 60 && { timeout 60 ncu --clock-control none -k regex:tilepipe_attention --launch-skip 1 --launch-count 1 $NS $B probe tma-wgmma-ws-ov-persist-s3 --workload attention --batch 4 --heads 16 --seqlen 4096 --head-dim 128 --dtype bf16 > $O/ncu-attn.log 2>&1; echo "--- ncu attention exit $? at $(el) s" >> $T; grep -vE "^\[|^==PROF==" $O/ncu-attn.log | grep -E "[0-9]" | grep -vE "^ +[A-Z][a-z].*[a-z] *$" | head -60 >> $T; }
echo "total $(el) s" >> $T
tar czf $OUT/r.tgz -C $O .
