#!/usr/bin/env bash
# Ping-pong's turn passed once the last MMAs are issued (not retired): checked (its control 20 of
# 20) and timed against the build before (592bb56, target/ab/tilepipe-old) in alternation at 4096^3
# and 8192^3; Nsight Compute's stall reasons for the f32 FFMA and the bf16 mma.sync kernels.
set -u
L=${LIMIT:-470}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; room() { [ $(( $(el) + $1 )) -lt $L ]; }
B=$PWD/target/release/tilepipe; A=/tmp/tilepipe-old; gunzip -c target/ab/tilepipe-old.gz > $A; chmod +x $A; O=$OUT/r; mkdir -p $O; T=$OUT/R.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; $A --version; date -u; } > $T
tbl() { grep -vE "^\[" $1 | grep -E "^│ [a-zA-Z]|FAIL|error|skip|CLOCKS|repeatab" | grep -vE "┆ attested|^│ (swap|s[23]|variant  *┆ regs) " | cut -c1-200 | head -24; }
summ() { for f in "$@"; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1) at $(el) s"; grep -E '^FAIL|^ok   control' $O/$f.log | cut -c1-300 | head -12; } >> $T; done; }
grun() { n=$1; bin=$2; shift 2; timeout $1 $bin run --workload gemm "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n ($($bin --version)) exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n; }
timeout 200 $B check --workload gemm --dtypes bf16,f16 --variants tma-wgmma-ws-pp,ctl-tma-pp-turn-skipped --out $O/cp > $O/cp.log 2>&1
summ cp
P=tma-wgmma-ws-st-s4,tma-wgmma-ws-pp-s4,tma-wgmma-ws-pp-st-s5
S4="--dtype bf16 --layout nk --m 4096 --n 4096 --k 4096 --variants $P"
S8="--dtype bf16 --layout nk --m 8192 --n 8192 --k 8192 --variants $P"
room 30 && grun p4-old $A 30 $S4
room 30 && grun p4-new $B 30 $S4
room 30 && grun p4-old2 $A 30 $S4
room 30 && grun p4-new2 $B 30 $S4
room 45 && grun p8-new $B 45 $S8
room 45 && grun p8-old $A 45 $S8
M="--section SpeedOfLight --section Occupancy --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active"
nc() { n=$1; v=$2; shift 2; timeout $1 /usr/local/cuda/bin/ncu -k regex:tilepipe_gemm --launch-count 1 $M $B probe $v --workload gemm "${@:2}" > $O/$n.txt 2>&1; echo "--- $n exit $? at $(el) s" >> $T; grep -E "passed|FAILED|stalled|pipe|wavefronts|bank|inst_executed|issue_active|Duration|SM Frequency|Registers|Achieved Occ|Theoretical Occ|Block Limit" $O/$n.txt | grep -vE " 0$| 0\.0[0-9]*$" | cut -c1-150 | head -40 >> $T; cp $O/$n.txt $OUT/$n.txt; }
room 50 && nc ncu-f32 cpasync-cg16-s4-128x128x32-8w 50 --dtype f32 --layout kn --m 4096 --n 4096 --k 4096
room 50 && nc ncu-mma cpasync-cg16-s4 50 --dtype bf16 --layout nk --m 4096 --n 4096 --k 4096
room 50 && nc ncu-pp tma-wgmma-ws-pp-st-s5 50 --dtype bf16 --layout nk --m 4096 --n 4096 --k 4096
echo "total $(el) s" >> $T
cp $O/cp.log $OUT/cp.log
tar czf $OUT/r.tgz -C $O .
