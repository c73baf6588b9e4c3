#!/usr/bin/env bash
# GEMM ping-pong checked (its control 20 of 20) and timed; attention's softmax on four chains
# checked and timed against the build before it (d5890ee, target/ab/tilepipe-old) in the same
# call; mma.sync 8192^3 beside cuBLAS; Nsight Compute on mma.sync and ping-pong.
set -u
L=${LIMIT:-470}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; room() { [ $(( $(el) + $1 )) -lt $L ]; }
B=$PWD/target/release/tilepipe; A=/tmp/tilepipe-old; gunzip -c target/ab/tilepipe-old.gz > $A; chmod +x $A; O=$OUT/r; mkdir -p $O; T=$OUT/R.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; $A --version; date -u; } > $T
tbl() { grep -vE "^\[" $1 | grep -E "^│ [a-zA-Z]|FAIL|error|skip|clocks|repeatab" | grep -vE "┆ attested|^│ (swap|s[23]) " | cut -c1-200 | head -30; }
summ() { for f in "$@"; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1) at $(el) s"; grep -E '^FAIL|turn' $O/$f.log | cut -c1-400 | head -12; } >> $T; done; }
grun() { n=$1; shift; timeout $1 $B run --workload gemm "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n; }
arun() { n=$1; bin=$2; shift 2; timeout $1 $bin run --workload attention --variants tma-wgmma-ws-ov-persist-s3,tma-wgmma-ws-ov-s3,tma-wgmma-pp-ov-s3 --peers torch "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n ($($bin --version)) exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n; }
timeout 170 $B check --workload gemm --dtypes bf16 --variants tma-wgmma-ws-pp,ctl-tma-pp-turn-skipped --out $O/cp > $O/cp.log 2>&1 &
timeout 170 $B check --workload attention --dtypes bf16 --variants tma-wgmma-ws-ov-persist-s3,tma-wgmma-pp-ov-s3,ctl-tma-wgmma-ov-early-release --out $O/ca > $O/ca.log 2>&1 &
wait
summ cp ca
cp $O/cp.log $OUT/cp.log
P=tma-wgmma-ws-st-s4,tma-wgmma-ws-persist-s4,tma-wgmma-ws-pp-s4,tma-wgmma-ws-pp-s5,tma-wgmma-ws-pp-st-s5
room 40 && grun p4k 40 --dtype bf16 --layout nk --m 4096 --n 4096 --k 4096 --variants $P
room 40 && arun a4k-old $A 40
room 40 && arun a4k-new $B 40
room 55 && grun p8k 55 --dtype bf16 --layout nk --m 8192 --n 8192 --k 8192 --variants $P
room 40 && arun a4k-new2 $B 40
room 60 && grun mma 60 --dtype bf16 --layout nk --m 8192 --n 8192 --k 8192 --variants cpasync-cg16-s4,cpasync-cg16-s4-128x256x64-8w,cpasync-cg16-s3-128x256x64-8w,cpasync-cg16-s4-128x128x32-8w-2b
M="--section SpeedOfLight --section WarpStateStats --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed_op_ldsm.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed"
nc() { n=$1; v=$2; shift 2; timeout $1 /usr/local/cuda/bin/ncu -k regex:tilepipe_gemm --launch-count 1 $M $B probe $v --workload gemm "${@:2}" > $O/$n.txt 2>&1; echo "--- $n exit $? at $(el) s" >> $T; grep -E "built|twin|Throughput|Duration|Registers|Achieved Occupancy|hmma|bank_conflicts|ldsm|dram__|Stall|Warp Cycles|Issued Warp|No Eligible|Active Warps|One or More|passed|FAILED" $O/$n.txt | cut -c1-160 | head -40 >> $T; cp $O/$n.txt $OUT/$n.txt; }
room 60 && nc ncu-mma cpasync-cg16-s4-128x256x64-8w 60 --dtype bf16 --layout nk --m 8192 --n 8192 --k 8192
room 60 && nc ncu-pp tma-wgmma-ws-pp-s5 60 --dtype bf16 --layout nk --m 8192 --n 8192 --k 8192
echo "total $(el) s" >> $T
tar czf $OUT/r.tgz -C $O .
