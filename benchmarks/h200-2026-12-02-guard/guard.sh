#!/usr/bin/env bash
# the mbarrier ring's controls at RUNS runs each, all at once, and the correct bulk/TMA variants'
# suites beside them: usage guard.sh BIN OUT RUNS SET (SET: a = rows f32 + gemm bf16 kn, b = rows bf16/copy f16 + gemm bf16 nk)
bin=$1; out=$2; runs=$3; set=$4; mkdir -p $out
one() { local tag=$1; shift; local t0=$(date +%s)
  $bin check "$@" --out $out/$tag > $out/$tag.log 2>&1; local rc=$?
  echo "$tag rc=$rc $(( $(date +%s) - t0 )) s $(grep -E '^[0-9]+ passed' $out/$tag.log)" >> $out/cost.txt; }
if [ $set = a ]; then
  for c in ctl-tma-skip-wait ctl-tma-ws-early-release ctl-tma-wrong-parity ctl-tma-no-expect-tx; do
    one rows-f32-$c --workload rmsnorm --dtypes f32 --suite-hidden 4096 --variants $c --runs $runs & done
  for c in ctl-tma-wrong-parity ctl-tma-skip-wait ctl-tma-tx-short ctl-tma-tx-long ctl-tma-ws-early-release; do
    one gemm-kn-$c --workload gemm --dtypes bf16 --layouts kn --variants $c --runs $runs & done
  one rows-bf16-h1544-bulk-tma --workload rmsnorm --dtypes bf16 --suite-hidden 1544 --variants bulk,tma &
  one gemm-bf16-kn-tma --workload gemm --dtypes bf16 --layouts kn --variants tma &
else
  for c in ctl-tma-no-expect-tx ctl-tma-wrong-parity; do
    one copy-f16-$c --workload copy --dtypes f16 --suite-hidden 1544 --variants $c --runs $runs &
    one rows-bf16-$c --workload rmsnorm --dtypes bf16 --suite-hidden 4096 --variants $c --runs $runs & done
  for c in ctl-tma-tx-short ctl-tma-tx-long; do
    one gemm-nk-$c --workload gemm --dtypes bf16 --layouts nk --variants $c --runs $runs & done
  one copy-f32-h4096-bulk-tma --workload copy --dtypes f32 --suite-hidden 4096 --variants bulk,tma &
  one gemm-f16-nk-tma --workload gemm --dtypes f16 --layouts nk --variants tma &
fi
wait
{ dmesg 2>/dev/null || journalctl -k --no-pager 2>/dev/null; } | grep -iE "xid" | tail -40 > $out/xid.txt
sort $out/cost.txt
echo "xid lines: $(wc -l < $out/xid.txt)"
for f in $out/*.log; do grep -E "^(ok|FAIL)" $f | grep -E "^FAIL|control" | cut -c1-260; done
