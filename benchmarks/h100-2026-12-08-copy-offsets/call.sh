#!/usr/bin/env bash
# (the builds that read the changed body or copy plan: staged, cp.async, memcpy_async, with the cp.async controls)
# mma.sync's held MMAs and the 32-bit copy offsets (272c572) against 2fcfe76
# (target/ab/tilepipe-old): the GEMM suites of those builds (f32 and bf16 side by side; f16 runs the bf16 body), then mma.sync bf16
# and f32 timed old/new in alternation, and the new f32 tile.
set -u
L=${LIMIT:-220}
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }; room() { [ $(( $(el) + $1 )) -lt $L ]; }
B=$PWD/target/release/tilepipe; A=/tmp/tilepipe-old; gunzip -c target/ab/tilepipe-old.gz > $A; chmod +x $A; O=$OUT/r; mkdir -p $O; T=$OUT/R.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv; $B --version; $A --version; date -u; } > $T
tbl() { grep -vE "^\[" $1 | grep -E "^│ [a-zA-Z]|FAIL|error|repeatab|^clocks" | grep -vE "┆ attested|^│ (b|variant  *┆ regs|step) |skipped" | cut -c1-200 | head -12; }
summ() { for f in "$@"; do { echo "--- $f: $(grep -E 'passed, ' $O/$f.log | tail -1) at $(el) s"; grep -E '^FAIL' $O/$f.log | cut -c1-220 | head -20; echo "control lines 20/20: $(grep -c '^ok   control.*20/20' $O/$f.log), other control lines: $(grep '^ok   control' $O/$f.log | grep -vc '20/20')"; grep -E '^ok   control' $O/$f.log | grep -v '20/20' | cut -c1-200 | head; } >> $T; done; }
wrun() { n=$1; bin=$2; shift 2; timeout $1 $bin run "${@:2}" --out $O/$n > $O/$n.log 2>&1; echo "--- $n ($($bin --version)) exit $? at $(el) s" >> $T; tbl $O/$n.log >> $T; rm -rf $O/$n; }
for d in f32 bf16; do timeout 100 $B check --workload gemm --dtypes $d --variants sync,regprefetch,cpasync,mca,ctl-skip-wait,ctl-early-release,ctl-wait-short,ctl-no-barrier,ctl-overfill,ctl-commit-after-wait,ctl-drain-no-commit --out $O/c$d > $O/c$d.log 2>&1 & done
wait
summ cf32 cbf16
M4="--workload gemm --dtype bf16 --layout nk --m 4096 --n 4096 --k 4096 --variants cpasync-cg16-s4,cpasync-cg16-s3,cpasync-cg16-s4-128x256x64-8w,cpasync-cg16-s3-128x128x32-8w-2b"
F4="--workload gemm --dtype f32 --layout kn --m 4096 --n 4096 --k 4096 --variants cpasync-cg16-s4,cpasync-cg16-s4-128x128x32-8w,cpasync-cg16-s4-128x256x16-8w"
M8="--workload gemm --dtype bf16 --layout nk --m 8192 --n 8192 --k 8192 --variants cpasync-cg16-s4"
for r in 1 2; do
  room 25 && wrun m4-old$r $A 25 $M4; room 25 && wrun m4-new$r $B 25 $M4
  room 30 && wrun f4-old$r $A 30 $F4; room 30 && wrun f4-new$r $B 30 $F4
done
room 40 && wrun m8-new $B 40 $M8; room 40 && wrun m8-old $A 40 $M8
room 40 && wrun f4-tiles $B 40 --workload gemm --dtype f32 --layout kn --m 4096 --n 4096 --k 4096 --variants cpasync-cg16-s4-128x256x16-8w,cpasync-cg16-s4-128x256x32-8w,cpasync-cg16-s3-128x256x32-8w,cpasync-cg16-s3-128x256x16-8w
M="--section SpeedOfLight --section Occupancy --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active"
nc() { n=$1; v=$2; shift 2; timeout $1 /usr/local/cuda/bin/ncu -k regex:tilepipe_gemm --launch-count 1 $M $B probe $v --workload gemm "${@:2}" > $O/$n.txt 2>&1; echo "--- $n exit $? at $(el) s" >> $T; grep -E "passed|FAILED|stalled|pipe|wavefronts|bank|inst_executed|issue_active|Duration|SM Frequency|Registers|Achieved Occ|Theoretical Occ|Block Limit" $O/$n.txt | grep -vE " 0$| 0\.0[0-9]*$" | cut -c1-150 | head -40 >> $T; }
room 45 && nc ncu-f32 cpasync-cg16-s4-128x256x16-8w 45 --dtype f32 --layout kn --m 4096 --n 4096 --k 4096
room 30 && wrun f4nk-old $A 30 --workload gemm --dtype f32 --layout nk --m 4096 --n 4096 --k 4096 --variants cpasync-cg16-s4-128x256x16-8w,cpasync-cg16-s4-128x128x32-8w
room 30 && wrun f4nk-new $B 30 --workload gemm --dtype f32 --layout nk --m 4096 --n 4096 --k 4096 --variants cpasync-cg16-s4-128x256x16-8w,cpasync-cg16-s4-128x128x32-8w
room 45 && nc ncu-mma cpasync-cg16-s4 45 --dtype bf16 --layout nk --m 4096 --n 4096 --k 4096
echo "total $(el) s" >> $T
for d in f32 bf16; do gzip -c $O/c$d.log > $OUT/c$d.log.gz; done
tar czf $OUT/r.tgz -C $O .
