#!/usr/bin/env bash
# Starts the final suites (every shard, controls at RUNS=100) and the 25 mutant trees in the
# background under /tmp/final, from a copy of the tree, so later calls only watch.
set -u
D=/tmp/final
[ -e $D/started ] && { echo "already started"; exit 0; }
mkdir -p $D
cp -r "$PWD" $D/repo && rm -rf $D/repo/benchmarks
cd $D/repo
date -u > $D/started
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv; ./target/release/tilepipe --version; git log --oneline -1 2>/dev/null; nproc; } > $D/info.txt 2>&1
export RUNS=100 PATH=/usr/local/cuda/bin:$PATH
all=$(bash scripts/shards.sh list | awk '{print $1}')
A=$(echo "$all" | grep -E 'tma-ctl|rmsnorm-.*-ctl-|copy-.*-ctl-tma' | paste -sd' ')
B=$(echo "$all" | grep -vE 'tma-ctl|rmsnorm-.*-ctl-|copy-.*-ctl-tma' | paste -sd' ')
echo "A: $A" > $D/split.txt; echo "B: $B" >> $D/split.txt
setsid nohup bash scripts/shards.sh run $D/sa ${DEADLINE:-1450} 7 $A > $D/sa.out 2>&1 < /dev/null &
setsid nohup bash scripts/shards.sh run $D/sb ${DEADLINE:-1450} 7 $B > $D/sb.out 2>&1 < /dev/null &
m() { local n=$1; shift; setsid nohup env TILEPIPE_BIN=$PWD/target/release/tilepipe "$@" > $D/$n.log 2>&1 < /dev/null & }
m m1 MUTANT_WORKLOADS="rmsnorm copy" timeout 1400 scripts/mutants.sh $D/m1 ring-no-init-sync
m m2 MUTANT_WORKLOADS=gemm timeout 1400 scripts/mutants.sh $D/m2 ring-no-init-sync
m m3 timeout 1400 scripts/mutants.sh $D/m3 ring-wrong-parity tma-short-tx ring-refill-skips-first-wait ring-phase-hardcoded-2 ring-empty-count-short ring-no-init-fence
m m4 timeout 1400 scripts/mutants.sh $D/m4 tma-tail-tx-rows bulk-tail-tx-full-tile ring-drain-past-end wgmma-wait-one gemm-ktail-overread fault-cpasync sync-no-release-barrier
m m5 timeout 1400 scripts/mutants.sh $D/m5 cpasync-wait-one-short cpasync-commit-before-issue cpasync-no-wait-in-drain cpasync-barrier-before-wait cpasync-drain-one-short regprefetch-no-publish-barrier
m m6 timeout 1400 scripts/mutants.sh $D/m6 mca-pipeline-no-acquire mca-pipeline-release-before-read mca-pipeline-deeper-than-slots mca-barrier-no-refill-sync mca-barrier-waits-fill-slot
echo started
