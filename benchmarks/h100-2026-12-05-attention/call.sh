#!/usr/bin/env bash
# one device call: attention and GEMM Hopper suites at 20 runs a control, then attention timed beside SDPA
set -u
B=$PWD/target/release/tilepipe; O=$OUT/c1; mkdir -p $O
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv > $O/info.log; $B --version >> $O/info.log
t0=$(date +%s)
timeout 300 $B check --workload attention --dtypes f16 --runs 20 --out $O/ca16 > $O/ca16.log 2>&1 &
timeout 300 $B check --workload attention --dtypes bf16 --runs 20 --out $O/cab > $O/cab.log 2>&1 &
timeout 300 $B check --workload gemm --dtypes bf16 --layouts nk --variants tma-wgmma,ctl-tma --runs 20 --out $O/cg > $O/cg.log 2>&1 &
wait
echo "checks $(( $(date +%s) - t0 )) s"
for f in ca16 cab cg; do echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1)"; grep -E '^FAIL' $O/$f.log | cut -c1-260 | head -8; echo "controls ok $(grep -cE '^ok +control' $O/$f.log) fail $(grep -cE '^FAIL +control' $O/$f.log)"; done
export TORCHINDUCTOR_CACHE_DIR=/tmp/ind
timeout 170 $B run --workload attention --peers torch --out $O/att > $O/att.log 2>&1; echo "att exit $?"
timeout 130 $B run --workload attention --causal --peers torch --out $O/attc > $O/attc.log 2>&1; echo "attc exit $?"
for f in att attc; do grep -vE "^\[" $O/$f.log | grep -E "^│ [a-zA-Z]|FAIL|error|skip" | cut -c1-200 | head -30; done
echo "total $(( $(date +%s) - t0 )) s"
tar -C $OUT -czf $OUT/c1.tgz c1 && rm -rf $O/ca16 $O/cab $O/cg $O/att $O/attc
