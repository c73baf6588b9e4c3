#!/usr/bin/env bash
# The full suites (rmsnorm and copy in f32/f16/bf16, gemm in every precision and both layouts,
# attention in f16/bf16 at head dimensions 64 and 128)
# with every control run RUNS (100) times, cut into shards that run side by side on one GPU
# machine within a deadline (a check validates and never times, so sharing the GPU changes no
# verdict). The shards of one suite are its groups (hidden size, layout) crossed with its variants:
# the correct ones (at the suite's own runs), and the controls in small sets (at RUNS); together
# they are the whole suite. GEMM's come first: they take longest.
#   scripts/shards.sh list                          every shard: NAME and its check arguments
#   scripts/shards.sh run OUT SECONDS JOBS [NAME...] the named shards (default all), JOBS at once,
#                                                   none started after SECONDS - MARGIN (60), each killed
#                                                   at SECONDS; OUT.tgz holds OUT
# Per shard: OUT/NAME.log, OUT/NAME/check.json, and a line in OUT/summary.txt (totals, exit code,
# seconds, and how long the process took to exit after printing its totals). A process still
# alive 20 s after its totals has its threads' kernel stacks and wait channels written to
# OUT/NAME.stuck; it is killed (with its probe processes) 60 s after its totals.
set -u
runs=${RUNS:-100}
bin=${TILEPIPE_BIN:-$PWD/target/release/tilepipe}

rows_correct=sync,regprefetch,direct,cpasync,mca,bulk,tma
gemm_correct_sm80=sync,regprefetch,cpasync,mca
gemm_ctl_a=ctl-skip-wait,ctl-early-release,ctl-wait-short,ctl-no-barrier
gemm_ctl_b=ctl-overfill,ctl-commit-after-wait,ctl-drain-no-commit
gemm_tma_a=ctl-tma-wrong-parity,ctl-tma-skip-wait,ctl-tma-tx-short,ctl-tma-tx-long
gemm_tma_b=ctl-tma-wrong-stride,ctl-tma-wrong-box,ctl-tma-ws-early-release
gemm_tma_c=ctl-tma-mc2-release-local,ctl-tma-st-unfenced,ctl-tma-pp-turn-skipped
attn_correct=sync,regprefetch,cpasync,tma
attn_ctl_a=ctl-skip-wait,ctl-early-release,ctl-no-rescale,ctl-mask-shifted
attn_ctl_b=ctl-tma-wrong-parity,ctl-tma-wrong-stride
attn_ctl_c=ctl-tma-wgmma-early-release,ctl-tma-wgmma-no-rescale,ctl-tma-wgmma-ov-early-release

# the runs a part takes: RUNS for controls, the suite's own for correct variants
runs_of() { [[ $1 == *ctl* ]] && echo " --runs $runs"; }

list() {
  for dt in f32 f16 bf16; do
    parts="sm80:$gemm_correct_sm80 ctl-a:$gemm_ctl_a ctl-b:$gemm_ctl_b"
    [ $dt != f32 ] && parts="$parts tma:tma"
    # the TMA controls are bf16's
    [ $dt = bf16 ] && parts="$parts tma-ctl-a:$gemm_tma_a tma-ctl-b:$gemm_tma_b tma-ctl-c:$gemm_tma_c"
    for l in kn nk; do
      for part in $parts; do
        echo "gemm-$dt-$l-${part%%:*} --workload gemm --dtypes $dt --layouts $l --variants ${part#*:}$(runs_of "${part%%:*}")"
      done
    done
  done
  for dt in f16 bf16; do
    for d in 64 128; do
      for part in correct:$attn_correct ctl-a:$attn_ctl_a ctl-b:$attn_ctl_b ctl-c:$attn_ctl_c; do
        echo "attention-$dt-d$d-${part%%:*} --workload attention --dtypes $dt --head-dims $d --variants ${part#*:}$(runs_of "${part%%:*}")"
      done
    done
  done
  for w in rmsnorm copy; do
    for dt in f32 f16 bf16; do
      for h in 4096 1544; do
        for part in correct:$rows_correct ctl-cpasync:ctl-cpasync ctl-tma:ctl-tma; do
          echo "$w-$dt-h$h-${part%%:*} --workload $w --dtypes $dt --suite-hidden $h --variants ${part#*:}$(runs_of "${part%%:*}")"
        done
      done
    done
  done
}

# one NAME ARGS...: one shard, killed at the deadline; a process that lingers after its totals is
# looked at, then killed
one() {
  local name=$1 pid start totals_at= rc=
  shift
  start=$(date +%s)
  # shellcheck disable=SC2086 # the check arguments are one word each
  setsid $bin check "$@" --out "$out/$name" > "$out/$name.log" 2>&1 &
  pid=$!
  while kill -0 $pid 2>/dev/null; do
    now=$(date +%s)
    if [ -z "$totals_at" ] && grep -qE "^[0-9]+ passed, [0-9]+ failed" "$out/$name.log"; then
      totals_at=$now
    fi
    if [ -n "$totals_at" ] && [ $((now - totals_at)) -ge 20 ] && [ ! -e "$out/$name.stuck" ]; then
      for t in /proc/$pid/task/*; do
        echo "== $t $(cat "$t/comm" 2>/dev/null) wchan=$(cat "$t/wchan" 2>/dev/null) $(cut -d' ' -f3 "$t/stat" 2>/dev/null)"
        cat "$t/stack" 2>/dev/null
        cat "$t/syscall" 2>/dev/null
      done > "$out/$name.stuck"
      ps -o pid,ppid,stat,etime,cmd --ppid $pid >> "$out/$name.stuck" 2>&1
      command -v gdb > /dev/null && timeout 30 gdb -batch -p $pid -ex "thread apply all bt" >> "$out/$name.stuck" 2>&1
    fi
    if [ $((now - t0)) -ge "$deadline" ] || { [ -n "$totals_at" ] && [ $((now - totals_at)) -ge 60 ]; }; then
      kill -9 -- -$pid 2>/dev/null
    fi
    sleep 1
  done
  wait $pid
  rc=$?
  local end
  end=$(date +%s)
  # totals and exit within the same second
  [ -z "$totals_at" ] && grep -qE "^[0-9]+ passed, [0-9]+ failed" "$out/$name.log" && totals_at=$end
  echo "$name: $(grep -E "^[0-9]+ passed, [0-9]+ failed" "$out/$name.log" | tail -1 || echo "no totals"); exit $rc; $((end - start)) s; exit after totals: $([ -n "$totals_at" ] && echo "$((end - totals_at)) s" || echo -)" >> "$out/summary.txt"
}

case ${1:-} in
  list) list ;;
  run)
    out=${2:?usage: scripts/shards.sh run OUT SECONDS JOBS [NAME...]}
    deadline=${3:?SECONDS}
    jobs=${4:?JOBS}
    shift 4
    mkdir -p "$out"
    t0=$(date +%s)
    # the driver's own account of GPU faults and resets (Xid), before and after
    kernel_log() { { dmesg 2>/dev/null || journalctl -k --no-pager 2>/dev/null; } | grep -iE "xid|nvrm" | tail -"$1"; }
    kernel_log 20 > "$out/xid-before.txt"
    export -f one
    export bin out deadline t0
    list | while read -r name args; do
      { [ $# -eq 0 ] || [[ " $* " == *" $name "* ]]; } && echo "$name $args"
    done > "$out/queue.txt"
    # each line: a shard, started unless the deadline is less than a minute away
    # shellcheck disable=SC2016 # expanded by the inner shell
    xargs -P "$jobs" -L 1 bash -c '[ $(( $(date +%s) - t0 )) -lt $((deadline - ${MARGIN:-60})) ] && one "$0" "$@" || echo "$0: not started" >> "$out/summary.txt"' < "$out/queue.txt"
    kernel_log 400 > "$out/xid-after.txt"
    sort "$out/summary.txt" -o "$out/summary.txt"
    cat "$out/summary.txt"
    echo "driver log lines on faults (Xid) after the run: $(wc -l < "$out/xid-after.txt")"
    tar -C "$out" -czf "$out.tgz" . ;;
  *) echo "usage: scripts/shards.sh list | run OUT SECONDS JOBS [NAME...]"; exit 2 ;;
esac
