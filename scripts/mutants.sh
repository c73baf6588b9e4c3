#!/usr/bin/env bash
# Puts each mutant of scripts/mutate.py (all, or those named) through `check` and `run` on a GPU
# machine, in its own kernel tree (TILEPIPE_KERNELS), on the variants its bug is in, and says per
# mutant and command whether the bug was caught and which monitor rules the output names; the
# variants its line cannot bite ("clean") must pass. Usage: scripts/mutants.sh OUTDIR [MUTANT...]
# (the binary: TILEPIPE_BIN, default target/release/tilepipe; the workloads: MUTANT_WORKLOADS, default
# all three). Exits 1 if any mutant got through.
set -u
out=${1:?usage: scripts/mutants.sh OUTDIR [MUTANT...]}
shift
bin=${TILEPIPE_BIN:-$PWD/target/release/tilepipe}
rules_all=$(grep -oE '=> "[a-z-]+",' src/monitor/rule.rs | cut -d'"' -f2 | paste -sd'|')
mkdir -p "$out"
missed=0
# suite NAME: the suite axis flag of workload NAME, narrowed to one value
suite() { [ "$1" = gemm ] && echo "--layouts nk" || echo "--suite-hidden 4096"; }
# verdict NAME LOG RC EXPECT: caught (exit 1 with a failure reported: exit 2 is a refusal, which
# catches nothing), the rules the log names, and whether one of the EXPECTed rules is among them
verdict() {
  local named caught=no rule=yes
  # a rule is named as "RULE: what happened" or, in a count, "RULE xN"
  named=$(grep -oE "\b($rules_all)(: | x[0-9])" "$2" | sed -E 's/(: | x[0-9])$//' | sort -u | paste -sd, -)
  { [ "$3" = 1 ] && grep -qE "^FAIL|FAILED|faulted" "$2"; } && caught=yes
  if [ -n "$4" ] && [ "$4" != - ]; then
    rule=no
    for r in ${4//,/ }; do [[ ",$named," == *",$r,"* ]] && rule=yes; done
  fi
  echo "  $1: caught $caught (exit $3), expected rule named: $rule; rules named: ${named:-none} (expected: ${4:-none})"
  grep -E "passed, [0-9]+ failed|stopped|error:" "$2" | tail -1 | sed 's/^/    /'
  grep -E "^FAIL" "$2" | head -3 | cut -c1-240 | sed 's/^/    /'
  [ $caught = yes ] && [ $rule = yes ]
}
for m in ${*:-$(python3 scripts/mutate.py --list | cut -d: -f1)}; do
  tree=$out/k-$m
  python3 scripts/mutate.py "$m" "$tree" > /dev/null || { echo "$m: mutate.py failed"; missed=1; continue; }
  read -r rows gemm clean rules <<< "$(python3 scripts/mutate.py --fields "$m")"
  echo "=== $m ($(date -u +%H:%M:%S))"
  for w in ${MUTANT_WORKLOADS:-rmsnorm copy gemm}; do
    v=$rows
    [ $w = gemm ] && v=$gemm
    [ "$v" = - ] && continue
    log=$out/$m-$w-check.log
    # shellcheck disable=SC2046 # one argument per word
    TILEPIPE_KERNELS=$tree timeout 600 "$bin" check --workload $w --dtypes bf16 $(suite $w) \
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
      # shellcheck disable=SC2046 # one argument per word
      TILEPIPE_KERNELS=$tree timeout 600 "$bin" check --workload $w --dtypes bf16 $(suite $w) \
        --variants "$v" --runs 20 > "$log" 2>&1
      rc=$?
      echo "  clean $v: exit $rc (must be 0, no rule named): $(grep -E "passed, [0-9]+ failed" "$log" | tail -1)"
      { [ $rc = 0 ] && ! grep -qE "\b($rules_all): " "$log"; } || missed=1
    done
  fi
done
exit $missed
