#!/usr/bin/env bash
# attention: the ping-pong and 3-stage warp-specialised wgmma rings validated (20 runs a control) and
# timed beside SDPA at seqlen 4096 and 16384, head dim 128 and 64, causal and not; the views'
# bf16 views with the shift built in, beside the dense view and the row stride alone (3200, no offset). Summary lines land in $OUT/F.txt as they are measured.
set -u
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
export PATH=/usr/local/cuda/bin:$PATH
B=$PWD/target/release/tilepipe; O=$OUT/f; mkdir -p $O; T=$OUT/F.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; date -u; } > $T
timeout 240 $B check --workload attention --dtypes bf16 --variants tma-wgmma,ctl-tma-wgmma --runs 20 --out $O/cab > $O/cab.log 2>&1 &
timeout 240 $B check --workload attention --dtypes f16 --variants tma-wgmma,ctl-tma-wgmma --runs 20 --out $O/caf > $O/caf.log 2>&1 &
timeout 200 $B check --dtypes bf16 --variants cpasync-cg16-s2,bulk-s2,tma-s2,direct,ctl-cpasync-window-shift,ctl-tma-window-unshifted --runs 20 --out $O/cv > $O/cv.log 2>&1 &
wait
echo "checks $(el) s" >> $T
for f in cab caf cv; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1)"; grep -E '^FAIL' $O/$f.log | cut -c1-300 | head -8; echo "controls ok $(grep -cE '^ok +control' $O/$f.log) fail $(grep -cE '^FAIL +control' $O/$f.log)"; } >> $T; done
rm -rf $O/cab $O/caf
tbl() { grep -vE "^\[" $1 | grep -E "^│ [a-zA-Z]|FAIL|error|skip|clocks|repeatab" | cut -c1-200 | head -40; }
V=tma-s3,tma-wgmma
run() { n=$1; shift; timeout $1 $B run --workload attention --variants $V --peers torch "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n/timelines $O/$n/report.html; }
run a4k 120
run a4kc 100 --causal
run a4k64 100 --head-dim 64
[ $(el) -lt 330 ] && run a16k 150 --batch 1 --seqlen 16384
[ $(el) -lt 420 ] && run a16kc 110 --batch 1 --seqlen 16384 --causal
summ() { python3 - "$1" <<'PY'
import collections, json, sys
r = json.load(open(sys.argv[1])); vs = r["variants"]
t = sorted((v["timing"]["device"]["median"] * 1e3, v["name"]) for v in vs if v["status"] == "passed" and v.get("timing"))
print(dict(collections.Counter(v["status"] for v in vs)), "best: " + ", ".join("%.1f us %s" % x for x in t[:3]))
PY
}
for v in "dense:--row-stride 3072" "o1:--row-stride 3200 --offset 1" "s3200:--row-stride 3200" "o2:--row-stride 3200 --offset 2" "o3:--row-stride 3200 --offset 3" "o7:--row-stride 3200 --offset 7"; do
  [ $(el) -gt 540 ] && break
  n=bf16-${v%%:*}
  timeout 30 $B run --dtype bf16 --tokens 4099 --hidden 3072 ${v#*:} --out $O/$n > $O/$n.log 2>&1
  echo "--- $n exit $? at $(el) s: $(summ $O/$n/results.json 2>&1)" >> $T; grep clocks $O/$n.log >> $T
  rm -rf $O/$n/timelines $O/$n/report.html
done
echo "total $(el) s" >> $T
tar -C $OUT -czf $OUT/f.tgz f
cat $T
