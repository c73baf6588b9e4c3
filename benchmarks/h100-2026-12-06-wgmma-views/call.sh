#!/usr/bin/env bash
# wgmma attention validated and timed beside SDPA; views (issue 36); torch.compile's kernels inspected (issue 37). Summary lines land in $OUT/E.txt as they are measured.
set -u
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
export PATH=/usr/local/cuda/bin:$PATH TORCHINDUCTOR_CACHE_DIR=/tmp/ind
B=$PWD/target/release/tilepipe; O=$OUT/e; mkdir -p $O; T=$OUT/E.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; date -u; } > $T
timeout 220 $B check --workload attention --dtypes bf16 --variants tma-wgmma,ctl-tma-wgmma --runs 20 --out $O/cab > $O/cab.log 2>&1 &
timeout 220 $B check --workload attention --dtypes f16 --variants tma-wgmma,ctl-tma-wgmma --runs 20 --out $O/caf > $O/caf.log 2>&1 &
for dt in bf16 f32; do
  timeout 150 $B check --dtypes $dt --variants cpasync-cg16-s2,bulk-s2,tma-s2,direct,ctl-cpasync-window-shift,ctl-tma-window-unshifted --runs 20 --out $O/cv$dt > $O/cv$dt.log 2>&1 &
done
wait
echo "checks $(el) s" >> $T
for f in cab caf cvbf16 cvf32; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1)"; grep -E '^FAIL' $O/$f.log | cut -c1-300 | head -8; echo "controls ok $(grep -cE '^ok +control' $O/$f.log) fail $(grep -cE '^FAIL +control' $O/$f.log)"; } >> $T; done
rm -rf $O/cab $O/caf $O/cvbf16 $O/cvf32
tbl() { grep -vE "^\[" $1 | grep -E "^│ [a-zA-Z]|FAIL|error|skip|clocks" | cut -c1-220 | head -40; }
timeout 150 $B run --workload attention --peers torch --out $O/att > $O/att.log 2>&1; echo "--- att exit $? at $(el) s" >> $T; tbl $O/att.log >> $T
summ() { python3 - "$1" <<'PY'
import collections, json, sys
r = json.load(open(sys.argv[1])); vs = r["variants"]
t = [(v["timing"]["device"]["median"] * 1e3, v["name"]) for v in vs if v["status"] == "passed" and v.get("timing")]
print(dict(collections.Counter(v["status"] for v in vs)), "best: %.1f us %s" % min(t) if t else "best: none")
for v in vs:
    if v["status"] != "passed": print("    ", v["status"], v["name"], (v.get("detail") or "")[:140])
PY
}
for v in "bf16 dense:--row-stride 3072" "bf16 o1:--row-stride 3200 --offset 1" "f32 dense:--row-stride 3072" "f32 o1:--row-stride 3200 --offset 1" \
         "bf16 s3073:--row-stride 3073" "bf16 o7:--row-stride 3200 --offset 7" "f32 o7:--row-stride 3200 --offset 7" "f32 s3075:--row-stride 3075" \
         "bf16 o2:--row-stride 3200 --offset 2" "bf16 o3:--row-stride 3200 --offset 3" "f32 o2:--row-stride 3200 --offset 2" "f32 o3:--row-stride 3200 --offset 3" \
         "bf16 s3075:--row-stride 3075" "f32 s3073:--row-stride 3073" \
         "bf16 out3:--row-stride 3200 --offset 17 --out-row-stride 3075 --out-offset 3" "f32 out3:--row-stride 3200 --offset 17 --out-row-stride 3075 --out-offset 3"; do
  [ $(el) -gt 400 ] && { echo "skip views $v: time" >> $T; continue; }
  k=${v%%:*}; dt=${k% *}; n=$dt-${k#* }
  timeout 30 $B run --dtype $dt --tokens 4099 --hidden 3072 ${v#*:} --out $O/$n > $O/$n.log 2>&1
  r=$?; echo "--- $n exit $r at $(el) s" >> $T; summ $O/$n/results.json >> $T 2>&1; grep -E "clocks" $O/$n.log >> $T
  rm -rf $O/$n/timelines $O/$n/report.html
done
if [ $(el) -lt 440 ]; then
  timeout 40 $B run --tokens 4099 --hidden 3072 --variants direct,cpasync-cg16-s2 --peers torch --out $O/rms > $O/rms.log 2>&1; echo "rms exit $? at $(el) s" >> $T
  timeout 50 $B run --workload gemm --dtype bf16 --layout nk --variants tma-wgmma-ws-st-s4 --peers torch --out $O/gemm > $O/gemm.log 2>&1; echo "gemm exit $? at $(el) s" >> $T
  timeout 15 $B inspect /tmp/ind > $O/inspect.txt 2>&1; echo "inspect exit $?" >> $T
  timeout 15 $B inspect /tmp/ind --format json > $O/inspect.json 2> $O/inspect.err
  tar -C /tmp -czf $O/indcache.tgz --exclude='*.so' --exclude='*.ptx' --exclude='*.llir' --exclude='*.ttir' --exclude='*.ttgir' --exclude='*.py' ind 2>/dev/null
  rm -rf $O/rms/timelines $O/gemm/timelines $O/rms/report.html $O/gemm/report.html
fi
[ $(el) -lt 500 ] && { timeout $(( 560 - $(el) )) $B run --workload attention --causal --peers torch --out $O/attc > $O/attc.log 2>&1; echo "--- attc exit $? at $(el) s" >> $T; tbl $O/attc.log >> $T; }
rm -rf $O/att/timelines $O/attc/timelines
echo "total $(el) s" >> $T
tar -C $OUT -czf $OUT/e.tgz e
cat $T
