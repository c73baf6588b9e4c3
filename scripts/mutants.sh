#!/usr/bin/env bash
# Puts each mutant of scripts/mutate.py (all, or those named) through `check` and `run` on a GPU
# machine, in its own kernel tree (TILEPIPE_KERNELS), on the variants its bug is in, and says per
# mutant and command whether the bug was caught and which monitor rules the output names; the
# variants its line cannot bite ("clean") must pass. Usage: scripts/mutants.sh OUTDIR [MUTANT...]
# (the binary: TILEPIPE_BIN, default target/release/tilepipe). Exits 1 if any mutant got through.
set -u
out=${1:?usage: scripts/mutants.sh OUTDIR [MUTANT...]}
shift
bin=${TILEPIPE_BIN:-$PWD/target/release/tilepipe}
rules_all=$(grep -oE '=> "[a-z-]+",' src/monitor/rule.rs | cut -d'"' -f2 | paste -sd'|')
mkdir -p "$out"
missed=0
# verdict NAME LOG RC EXPECT: caught or not, the summary, and the rules the log names
verdict() {
  local named caught
  named=$(grep -oE "\b($rules_all): " "$2" | sort -u | tr -d ': ' | paste -sd, -)
  caught=no
  { [ "$3" != 0 ] || grep -qE "FAILED|faulted" "$2"; } && caught=yes
  echo "  $1: caught $caught (exit $3) rules named: ${named:-none} (expected: $4)"
  grep -E "passed, [0-9]+ failed|stopped" "$2" | tail -1 | sed 's/^/    /'
  grep -E "^FAIL" "$2" | head -3 | cut -c1-240 | sed 's/^/    /'
  [ $caught = yes ]
}
for m in ${*:-$(python3 scripts/mutate.py --list | cut -d: -f1)}; do
  tree=$out/k-$m
  python3 scripts/mutate.py "$m" "$tree" > /dev/null || { echo "$m: mutate.py failed"; missed=1; continue; }
  read -r rows gemm clean rules <<< "$(python3 scripts/mutate.py --fields "$m")"
  echo "=== $m ($(date -u +%H:%M:%S))"
  for w in rmsnorm copy gemm; do
    v=$rows
    [ $w = gemm ] && v=$gemm
    [ "$v" = - ] && continue
    log=$out/$m-$w-check.log
    TILEPIPE_KERNELS=$tree timeout 600 "$bin" check --workload $w --dtypes bf16 --suite-hidden 4096 --layouts nk \
      --variants "$v" --runs 20 --out "$out/$m-$w-check" > "$log" 2>&1
    verdict "check $w" "$log" $? "$rules" || missed=1
    [ $w = gemm ] && args="--m 1000 --n 1000 --k 1000 --layout nk" || args="--tokens 65537"
    log=$out/$m-$w-run.log
    # shellcheck disable=SC2086 # one argument per word
    TILEPIPE_KERNELS=$tree timeout 300 "$bin" run --workload $w $args --variants "$v" --repeats 5 --out "$out/$m-$w-run" > "$log" 2>&1
    verdict "run $w" "$log" $? "$rules" || missed=1
  done
  if [ "$clean" != - ]; then
    for v in ${clean//,/ }; do
      w=rmsnorm
      case $v in tma-wgmma*) w=gemm ;; esac
      log=$out/$m-clean-$v.log
      TILEPIPE_KERNELS=$tree timeout 600 "$bin" check --workload $w --dtypes bf16 --suite-hidden 4096 --layouts nk \
        --variants "$v" --runs 20 > "$log" 2>&1
      rc=$?
      echo "  clean $v: exit $rc (must be 0, no rule named): $(grep -E "passed, [0-9]+ failed" "$log" | tail -1)"
      { [ $rc = 0 ] && ! grep -qE "\b($rules_all): " "$log"; } || missed=1
    done
  fi
done
exit $missed
