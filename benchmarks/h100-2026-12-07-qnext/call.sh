#!/usr/bin/env bash
# H200 figures: the new builds checked, attention beside SDPA (4096 and 16384, causal and not),
# the four decode shapes and the bf16 [N x K] set beside cuBLAS, f32 4096^3 and mma.sync 8192^3.
set -u
L=${LIMIT:-460}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; room() { [ $(( $(el) + $1 )) -lt $L ]; }
B=$PWD/target/release/tilepipe; O=$OUT/r; mkdir -p $O; T=$OUT/R.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; date -u; } > $T
tbl() { grep -vE "^\[" $1 | grep -E "^│ [a-zA-Z]|FAIL|error|skip|clocks|repeatab" | grep -vE "┆ attested|^│ (swap|s[23]) " | cut -c1-200 | head -30; }
summ() { for f in "$@"; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1) at $(el) s"; grep -E '^FAIL' $O/$f.log | cut -c1-300 | head -12; } >> $T; rm -rf $O/$f; done; }
AV=tma-wgmma-ws-ov-s3,tma-wgmma-pp-ov-s3,tma-wgmma-ws-ov-persist-s3
arun() { n=$1; shift; timeout $1 $B run --workload attention --variants sync,$AV --peers torch "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n; }
grun() { n=$1; shift; timeout $1 $B run --workload gemm "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n; }
timeout 60 $B check --workload gemm --dtypes bf16 --variants tma-wgmma-ws-sk,tma-wgmma-sk-s4,tma-wgmma-sk-s8 --out $O/cg > $O/cg.log 2>&1 &
timeout 90 $B check --workload attention --dtypes bf16,f16 --variants tma-wgmma-ws-s2,tma-wgmma-ws-ov-persist,ctl-tma-wgmma-ov-early-release --out $O/ca > $O/ca.log 2>&1 &
wait
summ cg ca
room 40 && arun a4k 40
room 40 && arun a4kc 40 --causal
room 50 && arun a16k 50 --batch 1 --seqlen 16384
room 45 && arun a16kc 45 --batch 1 --seqlen 16384 --causal
SK=tma-wgmma-sk-s4,tma-wgmma-sk-s6,tma-wgmma-sk-s8,tma-wgmma-ws-sk,cpasync-cg16-s6-sk-32x128x64-4w
for s in "16 14336 4096" "16 4096 14336" "128 14336 4096" "128 4096 14336"; do
  room 20 || break
  set -- $s; grun d$1-$2-$3 20 --dtype bf16 --layout nk --m $1 --n $2 --k $3 --variants $SK
done
V=tma-wgmma-ws-s4,tma-wgmma-ws-st-s4,tma-wgmma-ws-persist-mc2-st-s4
for s in "4096 4096 4096" "4096 14336 4096" "4096 4096 14336" "8192 4096 4096" "8192 4096 14336" "8192 14336 4096" "4096 14336 14336" "8192 14336 14336"; do
  room 35 || break
  set -- $s; grun g$1-$2-$3 35 --dtype bf16 --layout nk --m $1 --n $2 --k $3 --variants $V
done
room 40 && grun f32 40 --dtype f32 --m 4096 --n 4096 --k 4096 --variants cpasync-cg16-s4-128x128x32-8w,cpasync-cg16-s4-128x256x16-8w,cpasync-cg16-s3-128x128x32-8w
room 50 && grun mma 50 --dtype bf16 --layout nk --m 8192 --n 8192 --k 8192 --variants cpasync-cg16-s3,cpasync-cg16-s4
echo "total $(el) s" >> $T
tar czf $OUT/r.tgz -C $O .
