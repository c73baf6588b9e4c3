#!/usr/bin/env bash
# per-control cost of the probe-run controls: each control alone, all at once, RUNS runs
# usage: ctl-cost.sh BIN OUT RUNS
bin=$1; out=$2; runs=$3; mkdir -p $out
one() { local tag=$1; shift; local t0=$(date +%s)
  $bin check "$@" --runs $runs --out $out/$tag > $out/$tag.log 2>&1; local rc=$?
  echo "$tag rc=$rc $(( $(date +%s) - t0 )) s $(grep -E '^[0-9]+ passed' $out/$tag.log)" >> $out/cost.txt; }
for c in ctl-tma-skip-wait ctl-tma-ws-early-release ctl-tma-wrong-parity ctl-tma-no-expect-tx; do
  one rows-$c --workload rmsnorm --dtypes f32 --suite-hidden 4096 --variants $c & done
for c in ctl-tma-wrong-parity ctl-tma-skip-wait ctl-tma-tx-short ctl-tma-tx-long ctl-tma-ws-early-release; do
  one gemm-$c --workload gemm --dtypes bf16 --layouts kn --variants $c & done
wait
{ dmesg 2>/dev/null || journalctl -k --no-pager 2>/dev/null; } | grep -iE "xid" | tail -60 > $out/xid.txt
sort $out/cost.txt
for f in $out/*.log; do echo "== $f"; grep -E "^(ok|FAIL)" $f | grep -E "control" | cut -c1-300; done
