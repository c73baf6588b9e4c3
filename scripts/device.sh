#!/usr/bin/env bash
# Runs tilepipe on a GPU machine that has no Rust toolchain: the release binary is built elsewhere
# and carried along (target/release/tilepipe; target/before/tilepipe for `ab`).
# Usage: scripts/device.sh OUTDIR STEP [ARG...]; chain calls for several steps. A step writes into
# OUTDIR/NAME/, prints its summary and packs OUTDIR/NAME.tgz (few files travel back).
#   info                      the GPU, driver and clocks; the binary's version
#   check NAME W DTYPE...     W's suite, one process per precision side by side (checks do not time)
#   run NAME ARG...           one `tilepipe run ARG...`
#   ab NAME ARG...            `run ARG...` by the earlier binary and this one, alternating twice, so
#                             drift in clocks or temperature falls on both alike
#   mutants NAME [MUTANT...]  each protocol bug of scripts/mutate.py through check and run
#   sass NAME W DTYPE VARIANT...  SASS listings (host-test fixtures)
#   sweep NAME ARG...         one `tilepipe sweep ARG...`
#   sanitize NAME TOOLS       compute-sanitizer TOOLS (racecheck,synccheck,memcheck) on a small suite
#   gemm-shapes NAME LAYOUT VARIANTS MxNxK...  `run --workload gemm` (bf16) on each shape, the
#                             variants named beside cuBLAS (its share taken at one clock)
#   views NAME DTYPE...       RMSNorm 4099 x 3072 on views whose rows start inside 16-byte chunks,
#                             beside the dense view: offsets 1, 2, 3, 7 at row stride 3200, row
#                             strides 3073 and 3075, an output three elements in at stride 3075;
#                             then one mechanism of each kind under compute-sanitizer memcheck there
set -u
out=${1:?usage: scripts/device.sh OUTDIR STEP [ARG...]}
step=${2:?usage: scripts/device.sh OUTDIR STEP [ARG...]}
shift 2
bin=$PWD/target/release/tilepipe
export PATH=/usr/local/cuda/bin:$PATH
name=$step
[ "$step" != info ] && { name=${1:?$step needs a NAME}; shift; }
d="$out/$name"
mkdir -p "$d"
echo "=== $step $name ($(date -u +%H:%M:%S))"
# the lines of a log worth reading here: table rows, verdict lines, refusals
summary() { grep -vE "^\[" "$1" | grep -E "^│ [a-zA-Z]|ceiling|^FAIL|passed, |FAILED|ERROR|error:|caught" | cut -c1-240 | tail -${2:-40}; }
case $step in
  info)
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$d/info.log"
    $bin --version ;;
  check)
    w=$1; shift
    for dt in "$@"; do
      timeout ${CHECK_TIMEOUT:-560} $bin check --workload "$w" --dtypes "$dt" --out "$d/$dt" > "$d/check-$dt.log" 2>&1 &
    done
    wait
    for dt in "$@"; do
      echo "--- $w $dt"; grep -E "^FAIL|passed, " "$d/check-$dt.log" | cut -c1-300 | tail -20
      echo "controls: $(grep -cE '^ok +control' "$d/check-$dt.log") passed, $(grep -cE '^FAIL +control' "$d/check-$dt.log") failed"
    done ;;
  run)
    timeout ${RUN_TIMEOUT:-300} $bin run "$@" --out "$d" > "$d/run.log" 2>&1
    echo "exit $?"; summary "$d/run.log" ;;
  ab)
    for who in before after before2 after2; do
      b=$bin; case $who in before*) b=$PWD/target/before/tilepipe ;; esac
      timeout ${RUN_TIMEOUT:-200} $b run "$@" --out "$d/$who" > "$d/$who.log" 2>&1
      echo "--- $who exit $?"; summary "$d/$who.log" 30
    done ;;
  mutants)
    # each protocol bug of scripts/mutate.py (all, or those named) through check and run
    TILEPIPE_BIN=$bin scripts/mutants.sh "$d" "$@" > "$d/mutants.log" 2>&1
    echo "mutants exit $?"; grep -E "^===|^  (check|run|clean)" "$d/mutants.log" | cut -c1-240 ;;
  sass)
    w=$1; dt=$2; shift 2
    for v in "$@"; do
      $bin sass "$v" --workload "$w" --dtype "$dt" --listing "$d/$v.$dt.sass" > "$d/$v.txt" 2>&1 || echo "sass $v failed"
    done
    { cuobjdump --version | tail -1; nvdisasm --version | tail -1; } > "$d/TOOLS" ;;
  sweep)
    timeout ${SWEEP_TIMEOUT:-400} $bin sweep "$@" --out "$d" > "$d/sweep.log" 2>&1
    echo "exit $?"; summary "$d/sweep.log" ;;
  sanitize)
    timeout 400 $bin check --dtypes bf16 --suite-hidden 4096 --runs 1 --variants sync --sanitize "$1" --out "$d" > "$d/sanitize.log" 2>&1
    echo "exit $?"; grep -E "^FAIL|racecheck|synccheck|memcheck|passed, " "$d/sanitize.log" | cut -c1-200 | tail -40 ;;
  gemm-shapes)
    layout=$1; variants=$2; shift 2
    for shape in "$@"; do
      IFS=x read -r m n k <<< "$shape"
      timeout ${RUN_TIMEOUT:-200} $bin run --workload gemm --dtype bf16 --layout "$layout" --m "$m" --n "$n" --k "$k" \
        --variants "$variants" --out "$d/$shape" > "$d/$shape.log" 2>&1
      echo "--- $shape exit $?"; summary "$d/$shape.log" 30
    done ;;
  views)
    for dt in "$@"; do
      for v in "dense:--row-stride 3072" "o1:--row-stride 3200 --offset 1" "o2:--row-stride 3200 --offset 2" \
               "o3:--row-stride 3200 --offset 3" "o7:--row-stride 3200 --offset 7" "s3073:--row-stride 3073" \
               "s3075:--row-stride 3075" "out3:--row-stride 3200 --offset 17 --out-row-stride 3075 --out-offset 3"; do
        # shellcheck disable=SC2086 # the flags are one word each
        timeout ${RUN_TIMEOUT:-300} $bin run --dtype "$dt" --tokens 4099 --hidden 3072 ${v#*:} \
          --out "$d/$dt-${v%%:*}" > "$d/$dt-${v%%:*}.log" 2>&1
        echo "--- $dt ${v%%:*} exit $?"
        # statuses counted, the fastest passed variant, each skip's reason
        python3 - "$d/$dt-${v%%:*}/results.json" <<'PY'
import collections, json, sys
r = json.load(open(sys.argv[1]))
vs = r["variants"]
print(dict(collections.Counter(v["status"] for v in vs)))
t = [(v["timing"]["device"]["median"] * 1e3, v["name"]) for v in vs if v["status"] == "passed" and v.get("timing")]
print("best: %.1f us %s" % min(t) if t else "best: none")
for v in vs:
    if v["status"] != "passed":
        print(v["status"], v["name"], (v.get("detail") or "")[:200])
PY
      done
      for v in sync cpasync-cg16-s2 cpasync-ca4-s2 mca-pipeline-a16-s2 mca-barrier-a16-s2 bulk-s2 tma-s2 direct; do
        timeout 300 compute-sanitizer --tool memcheck $bin probe "$v" --dtype "$dt" --tokens 4099 --hidden 3072 \
          --row-stride 3200 --offset 17 --out-row-stride 3075 --out-offset 3 --wait-timeout-ms 10000 \
          > "$d/$dt-memcheck-$v.log" 2>&1
        echo "memcheck $dt $v exit $?: $(grep -E 'ERROR SUMMARY|passed|FAILED' "$d/$dt-memcheck-$v.log" | tr '\n' ' ' | cut -c1-200)"
      done
    done ;;
  *) echo "unknown step $step"; exit 2 ;;
esac
tar -C "$out" -czf "$out/$name.tgz" "$name" && rm -rf "$d"
