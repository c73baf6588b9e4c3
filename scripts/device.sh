#!/usr/bin/env bash
# Runs tilepipe on a GPU machine that has no Rust toolchain: the release binary is built elsewhere
# and carried along. Usage: scripts/device.sh OUTDIR STEP...
# Each step logs to OUTDIR/STEP.log and prints its summary.
set -u
out=${1:?usage: scripts/device.sh OUTDIR STEP...}
shift
mkdir -p "$out"
bin=./target/release/tilepipe
export PATH=/usr/local/cuda/bin:$PATH
step() { echo "=== $1 ($(date -u +%H:%M:%S))"; }
for s in "$@"; do
  step "$s"
  case $s in
    info)
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
      $bin --version ;;
    check)
      timeout 420 $bin check --out "$out" > "$out/check.log" 2>&1
      echo "exit $?"; grep -E "^FAIL|^skip|passed, " "$out/check.log" | tail -30 ;;
    racecheck)
      timeout 200 $bin check --dtypes bf16 --suite-hidden 4096 --runs 1 --variants sync --sanitize racecheck > "$out/racecheck.log" 2>&1
      echo "exit $?"; grep -E "^FAIL|^ok  racecheck|^info|passed, " "$out/racecheck.log" | tail -30 ;;
    syncmem)
      timeout 200 $bin check --dtypes bf16 --suite-hidden 4096 --runs 1 --variants sync --sanitize synccheck,memcheck \
        --sanitize-variants sync,cpasync-cg16-s2,mca-pipeline-a16-s2,tma-s3,tma-ws-s3 > "$out/syncmem.log" 2>&1
      echo "exit $?"; grep -E "^FAIL|^ok  (sync|mem)check|passed, " "$out/syncmem.log" | tail -20 ;;
    run)
      timeout 300 $bin run --timeline --explain-timing --out "$out/run" > "$out/run.log" 2>&1
      echo "exit $?"; grep -vE "^\[" "$out/run.log" | cut -c1-200 | tail -60 ;;
    run-again)
      timeout 300 $bin run --variants sync,cpasync-cg16-s2 > "$out/run2.log" 2>&1
      echo "exit $?"; grep -E "cubin cache" "$out/run2.log" ;;
    sweep)
      timeout 400 $bin sweep --out "$out/sweep" > "$out/sweep.log" 2>&1
      echo "exit $?"; grep -vE "^\[" "$out/sweep.log" | tail -45 ;;
    sass-fixtures)
      mkdir -p /tmp/fx
      for v in sync cpasync-cg16-s2 cpasync-ca4-s2 cpasync-ca8-s2 mca-pipeline-a16-s2 mca-pipeline-elem-s2 mca-barrier-a16-s2 mca-barrier-elem-s2 bulk-s2 tma-s3; do
        $bin sass "$v" --dtype bf16 --listing "/tmp/fx/$v.bf16.sass" > /dev/null 2>&1 || echo "sass $v failed"
      done
      cuobjdump --version | tail -1 > /tmp/fx/TOOLS
      tar -C /tmp/fx -czf "$out/sass-fixtures.tgz" . ;;
    *) echo "unknown step $s" ;;
  esac
done
