#!/usr/bin/env bash
# Runs tilepipe on a GPU machine that has no Rust toolchain: the release binary is built elsewhere
# and carried along. Usage: scripts/device.sh OUTDIR STEP...
# Steps: info | check-quick | check | run | run-again | sass-fixtures | sanitize | sweep | timeline
set -u
out=${1:?usage: scripts/device.sh OUTDIR STEP...}
shift
mkdir -p "$out"
bin=./target/release/tilepipe
export PATH=/usr/local/cuda/bin:$PATH
step() { echo "=== $* ($(date -u +%H:%M:%S))"; }
for s in "$@"; do
  case $s in
    info)
      step info
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
      $bin --version ;;
    check-quick)
      step check-quick
      timeout 300 $bin check --dtypes bf16 --suite-hidden 4096 --runs 3 --out "$out" > "$out/check-quick.log" 2>&1
      echo "exit $?"; grep -E "^FAIL|passed, " "$out/check-quick.log" | tail -40 ;;
    check)
      step check
      timeout 540 $bin check --out "$out" > "$out/check.log" 2>&1
      echo "exit $?"; grep -E "^FAIL|passed, " "$out/check.log" | tail -40 ;;
    run)
      step run
      timeout 300 $bin run --out "$out/run" > "$out/run.log" 2>&1
      echo "exit $?"; tail -60 "$out/run.log" ;;
    run-again)
      step run-again
      timeout 300 $bin run --out "$out/run2" > "$out/run2.log" 2>&1
      echo "exit $?"; grep -E "cubin cache|copy ceiling" "$out/run2.log" ;;
    sass-fixtures)
      step sass-fixtures
      mkdir -p /tmp/fx
      for v in sync cpasync-cg16-s2 cpasync-ca4-s2 cpasync-ca8-s2 mca-pipeline-a16-s2 mca-pipeline-elem-s2 mca-barrier-a16-s2 mca-barrier-elem-s2 bulk-s2 tma-s3; do
        $bin sass "$v" --dtype bf16 --listing "/tmp/fx/$v.bf16.sass" > /dev/null 2>&1 || echo "sass $v failed"
      done
      cuobjdump --version | tail -1 > /tmp/fx/TOOLS
      tar -C /tmp/fx -czf "$out/sass-fixtures.tgz" . ;;
    *) echo "unknown step $s" ;;
  esac
done
