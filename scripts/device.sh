#!/usr/bin/env bash
# Runs tilepipe on a GPU machine that has no Rust toolchain: the release binary is built elsewhere
# and carried along. Usage: scripts/device.sh OUTDIR STEP...
# Each step works in OUTDIR/STEP/, prints its summary, and leaves OUTDIR/STEP.tgz (few files travel back).
set -u
out=${1:?usage: scripts/device.sh OUTDIR STEP...}
shift
mkdir -p "$out"
bin=$PWD/target/release/tilepipe
export PATH=/usr/local/cuda/bin:$PATH
for s in "$@"; do
  echo "=== $s ($(date -u +%H:%M:%S))"
  d="$out/$s"
  mkdir -p "$d"
  case $s in
    info)
      nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee "$d/info.log"
      $bin --version ;;
    fixtures)
      for v in sync direct cpasync-cg16-s2 cpasync-ca4-s2 cpasync-ca8-s2 mca-pipeline-a16-s2 mca-pipeline-elem-s2 mca-barrier-a16-s2 mca-barrier-elem-s2 bulk-s2 tma-s3; do
        $bin sass "$v" --dtype bf16 --listing "$d/$v.bf16.sass" > "$d/$v.txt" 2>&1 || echo "sass $v failed"
      done
      cuobjdump --version | tail -1 > "$d/TOOLS"; nvdisasm --version | tail -1 >> "$d/TOOLS" ;;
    gemm-check)
      # all three precisions take about 10 minutes (bf16's Hopper controls fault about 200 times):
      # split them over calls with GEMM_DTYPES
      timeout 560 $bin check --workload gemm --dtypes ${GEMM_DTYPES:-f32,f16,bf16} --out "$d" > "$d/check.log" 2>&1
      echo "check exit $?"; grep -E "^FAIL|^ok   control|passed, " "$d/check.log" | cut -c1-300 | tail -60 ;;
    gemm-check-par)
      # the three precisions side by side, each in a process of its own (checks validate, they do
      # not time, so sharing the GPU changes no verdict); the cubin cache is written atomically
      for dt in ${GEMM_DTYPES:-bf16 f16 f32}; do
        timeout 570 $bin check --workload gemm --dtypes $dt --out "$d/$dt" > "$d/check-$dt.log" 2>&1 &
      done
      wait
      for dt in ${GEMM_DTYPES:-bf16 f16 f32}; do
        echo "--- $dt"; grep -E "^FAIL|passed, " "$d/check-$dt.log" | cut -c1-300 | tail -20
        grep -cE "^ok   control" "$d/check-$dt.log"
      done ;;
    peers)
      # the row workloads beside torch eager and torch.compile (PEER_SPECS: dtype,tokens,hidden;
      # PEER_VARIANTS: the tilepipe variants timed beside them)
      specs=${PEER_SPECS:-"bf16,262144,4096 f32,262144,4096 bf16,4099,3072 bf16,16384,14336"}
      for spec in $specs; do
        set -- $(echo "$spec" | tr , ' ')
        name=$1-$2x$3
        timeout ${PEER_TIMEOUT:-200} $bin run --peers torch --dtype $1 --tokens $2 --hidden $3 \
          ${PEER_TILE_ROWS:+--tile-rows $PEER_TILE_ROWS} ${PEER_VARIANTS:+--variants $PEER_VARIANTS} --out "$d/$name" > "$d/$name.log" 2>&1
        echo "$spec exit $?"; grep -vE "^\[" "$d/$name.log" | grep -E "^│ [a-z]|ceiling|ABOVE|peer\)|FAILED|ERROR" | cut -c1-220
      done ;;
    torch-code)
      # the Triton kernels torch.compile generates for the RMSNorm peer (TORCH_LOGS=output_code and
      # their PTX), then Nsight Compute on one launch of it (TORCH_CODE_SPECS: dtype,tokens,hidden)
      for spec in ${TORCH_CODE_SPECS:-f32,65536,8192 bf16,262144,4096}; do
        set -- $(echo "$spec" | tr , ' '); n=$1-$2x$3; mkdir -p "$d/$n"
        TORCH_LOGS=output_code timeout 120 python3 scripts/torch_kernel.py $1 $2 $3 "$d/$n" > "$d/$n.log" 2>&1
        echo "$spec exit $?"; grep -E "num_warps|XBLOCK|R0_BLOCK|RBLOCK|def triton|eviction|tl.store|grid" "$d/$n.log" | sort | uniq -c | sort -rn | head -14 | cut -c1-200
        grep -hE "^\.(maxntid|reqntid)|ld.global|st.global" "$d/$n"/*.ptx | sed 's/%[a-z0-9]*//g' | sort | uniq -c | sort -rn | head -8
        timeout 120 ncu --clock-control none --nvtx --nvtx-include "timed/" -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
          --section Occupancy --section LaunchStats --metrics dram__bytes_read.sum,dram__bytes_write.sum \
          python3 scripts/torch_kernel.py $1 $2 $3 > "$d/$n.ncu.txt" 2>&1
        echo "ncu exit $?"; grep -E "Duration|DRAM Throughput|dram__bytes|Block Size|Grid Size|Registers Per|Achieved Occupancy|Theoretical Occ|L2 Hit|L1/TEX Hit" "$d/$n.ncu.txt" | head -14
      done ;;
    exp|exp-*)
      # kernel experiments: each folder exp/k-NAME is a kernels/ tree with one change, run through
      # TILEPIPE_KERNELS beside this build's own (EXP_SPECS: dtype,tokens,hidden; EXP_TREES: which
      # folders, all by default; EXP_PEERS=1: torch beside the base run); name the step exp-SOMETHING to
      # keep two sets apart
      for spec in ${EXP_SPECS:-f32,65536,8192}; do
        set -- $(echo "$spec" | tr , ' ')
        for k in base ${EXP_TREES:-$(ls exp 2>/dev/null)}; do
          kd=""; [ $k != base ] && kd=$PWD/exp/$k
          TILEPIPE_KERNELS=$kd timeout ${EXP_TIMEOUT:-60} $bin run --dtype $1 --tokens $2 --hidden $3 $([ "${EXP_VARIANTS:-}" = all ] || echo --variants ${EXP_VARIANTS:-sync,direct}) $([ -n "${EXP_PEERS:-}" ] && [ $k = base ] && echo --peers torch) --out "$d/$1-$3-$k" > "$d/$1-$3-$k.log" 2>&1
          echo "== $spec $k exit $?"; grep -vE "^\[" "$d/$1-$3-$k.log" | grep -E "^│ [a-z]|ceiling" | grep -v "┆ regs" | awk -F'┆' '{print $1 $5 $6 $7 $8 $9}' | cut -c1-160
          grep -E "^│ [a-z]" "$d/$1-$3-$k.log" | grep -E "┆ [0-9]+ +┆ [0-9]+\+" | awk -F'┆' '{print $1 $2 $4 $5}' | cut -c1-120
        done
      done ;;
    small-copy)
      # movement alone at the small problem: the copy workload's variants beside cuMemcpyDtoD
      timeout 100 $bin run --workload copy --dtype bf16 --tokens 4099 --hidden 3072 --tile-rows 1 \
        --variants sync,direct,cpasync-cg16-s2,bulk-s2,tma-s2 --out "$d" > "$d/run.log" 2>&1
      echo "exit $?"; grep -vE "^\[" "$d/run.log" | grep -E "^│ [a-z]|ceiling" | cut -c1-200 ;;
    sweep-peers)
      # torch eager and torch.compile as lines of a sweep, beside sync and two pipelines
      timeout ${SWEEP_TIMEOUT:-400} $bin sweep --peers torch --axis mechanism=sync,direct,cpasync,tma --axis stages=2 \
        --axis tiles=1024,16384,131072 --no-probes --out "$d/sweep" > "$d/sweep.log" 2>&1
      echo "exit $?"; grep -vE "^\[" "$d/sweep.log" | tail -8 | cut -c1-220
      grep -c '"peer":"' "$d/sweep/sweep.jsonl" ;;
    direct-check)
      # the direct variant through both row suites, side by side (checks do not time)
      timeout ${DIRECT_CHECK_TIMEOUT:-300} $bin check --variants sync,direct --out "$d/rmsnorm" > "$d/rmsnorm.log" 2>&1 &
      timeout ${DIRECT_CHECK_TIMEOUT:-300} $bin check --workload copy --variants sync,direct --out "$d/copy" > "$d/copy.log" 2>&1 &
      wait
      for w in rmsnorm copy; do echo "--- $w"; grep -E "^FAIL|passed, |direct.*(sass|occupancy)" "$d/$w.log" | cut -c1-250 | tail -12; done ;;
    gemm-mca)
      timeout 120 $bin run --workload gemm --dtype f32 --layout kn --m 4096 --n 4096 --k 4096 \
        --variants sync,regprefetch,cpasync-cg16-s3,cpasync-cg16-s4-128x128x32-8w,mca-pipeline-a16-s3 --out "$d" > "$d/run.log" 2>&1
      echo "exit $?"; grep -E "^gemm|^│ [a-zA-Z]|FAILED|ERROR" "$d/run.log" | cut -c1-220 ;;
    gemm-hopper)
      timeout 300 $bin check --workload gemm --dtypes bf16 --layouts nk,kn --variants tma-wgmma,ctl-tma --runs ${RUNS:-4} --out "$d" > "$d/check.log" 2>&1
      echo "check exit $?"; grep -E "^FAIL|^ok   control|passed, |^skip" "$d/check.log" | cut -c1-300 | tail -60 ;;
    gemm-peers)
      # torch.matmul and torch.compile's Triton matmul beside the GEMM variants and cuBLAS
      for spec in ${GEMM_PEER_SPECS:-bf16,nk,8192,8192,8192 f32,kn,4096,4096,4096}; do
        set -- $(echo "$spec" | tr , ' ')
        timeout ${GEMM_PEER_TIMEOUT:-240} $bin run --workload gemm --peers torch --dtype $1 --layout $2 --m $3 --n $4 --k $5 \
          ${GEMM_PEER_VARIANTS:+--variants $GEMM_PEER_VARIANTS} --out "$d/$1-$2-$3" > "$d/$1-$2-$3.log" 2>&1
        echo "$spec exit $?"; grep -E "^│ [a-zA-Z]|peer\)|FAILED|ERROR" "$d/$1-$2-$3.log" | cut -c1-220
      done ;;
    gemm-timeline)
      timeout 200 $bin timeline --workload gemm --dtype bf16 --layout nk --m 8192 --n 8192 --k 8192 --tiles 24 --out "$d" > "$d/timeline.log" 2>&1
      echo "timeline exit $?"; grep -vE "^\[" "$d/timeline.log" | cut -c1-200 | tail -12 ;;
    gemm-perf)
      for spec in "f32 kn 4096 4096 4096" "bf16 nk 8192 8192 8192" "bf16 kn 4096 4096 4096" "f16 nk 4096 14336 4096"; do
        set -- $spec
        timeout 200 $bin run --workload gemm --dtype $1 --layout $2 --m $3 --n $4 --k $5 --out "$d/$1-$2-$3" > "$d/$1-$2-$3.log" 2>&1
        echo "$spec exit $?"; grep -E "^gemm|^│ [a-zA-Z]" "$d/$1-$2-$3.log" | cut -c1-250; grep -E "FAILED|ERROR|skipped:" "$d/$1-$2-$3.log" | cut -c1-250 | head -5
      done ;;
    gemm-sweep)
      for dt in bf16 f32; do
        timeout 200 $bin sweep --workload gemm --gemm-dtype $dt --out "$d/$dt" > "$d/$dt.log" 2>&1
        echo "$dt exit $?"; grep -E "^│ [a-z]" "$d/$dt.log" | cut -c1-160
      done ;;
    gemm-perf2)
      specs=${GEMM_SPECS:-"bf16,kn,8192,8192,8192,all bf16,nk,8192,8192,8192,all f32,kn,4096,4096,4096,all f32,kn,8192,8192,8192,cpasync f32,kn,1280,1280,1280,all bf16,kn,1280,1280,1280,cpasync-cg16-s2,cpasync-cg16-s4 bf16,nk,16,14336,4096,cpasync-cg16-s2,cpasync-cg16-s4 bf16,nk,128,14336,4096,cpasync-cg16-s2,cpasync-cg16-s4 bf16,nk,4096,14336,4096,cpasync-cg16-s2,cpasync-cg16-s4 bf16,nk,4096,4096,14336,cpasync-cg16-s2,cpasync-cg16-s4 bf16,nk,4099,3072,1000,cpasync-cg16-s2,cpasync-cg16-s4"}
      for spec in $specs; do
        spec=$(echo "$spec" | sed 's/,/ /; s/,/ /; s/,/ /; s/,/ /; s/,/ /')
        set -- $spec
        sel=""; [ "$6" != all ] && sel="--variants $6"
        timeout 200 $bin run --workload gemm --dtype $1 --layout $2 --m $3 --n $4 --k $5 $sel --out "$d/$1-$2-$3-$4-$5" > "$d/$1-$2-$3-$4-$5.log" 2>&1
        echo "$spec exit $?"; grep -E "^│ [a-zA-Z]" "$d/$1-$2-$3-$4-$5.log" | awk -F'┆' '{print $1 $3 $6 $10 $11 $12 $13 $14 $15}' | cut -c1-200; grep -E "FAILED|ERROR" "$d/$1-$2-$3-$4-$5.log" | cut -c1-250 | head -5
      done ;;
    gemm-smoke)
      timeout 150 $bin run --workload gemm --dtype f32 --m 1280 --n 1280 --k 1280 --out "$d/f32" > "$d/f32.log" 2>&1
      echo "f32 exit $?"; grep -vE "^\[" "$d/f32.log" | cut -c1-260 | tail -30
      timeout 150 $bin run --workload gemm --dtype bf16 --layout nk --out "$d/bf16" > "$d/bf16.log" 2>&1
      echo "bf16 exit $?"; grep -vE "^\[" "$d/bf16.log" | cut -c1-260 | tail -30
      timeout 200 $bin check --workload gemm --dtypes bf16,f32 --layouts kn --runs 4 --out "$d" > "$d/check.log" 2>&1
      echo "check exit $?"; grep -E "^FAIL|passed, " "$d/check.log" | cut -c1-300 | tail -40 ;;
    run)
      timeout 200 $bin run --timeline --explain-timing --out "$d" > "$d/run.log" 2>&1
      echo "exit $?"; grep -vE "^\[" "$d/run.log" | cut -c1-220 | tail -50
      timeout 60 $bin run --variants sync,cpasync-cg16-s2 --tokens 65536 > "$d/run2.log" 2>&1
      echo "second run exit $?"; grep -E "cubin cache" "$d/run2.log" ;;
    check-par)
      # the RMSNorm suite's three precisions side by side, each in a process of its own
      for dt in bf16 f16 f32; do
        timeout 450 $bin check --dtypes $dt --out "$d/$dt" > "$d/check-$dt.log" 2>&1 &
      done
      wait
      for dt in bf16 f16 f32; do
        echo "--- $dt"; grep -E "^FAIL|passed, " "$d/check-$dt.log" | cut -c1-300 | tail -20
        echo "controls caught 20/20: $(grep -c "caught 20/20" "$d/check-$dt.log")"
      done ;;
    check)
      timeout 470 $bin check --out "$d" > "$d/check.log" 2>&1
      echo "exit $?"; grep -E "^FAIL|passed, " "$d/check.log" | cut -c1-300 | tail -25 ;;
    sweep)
      timeout 100 $bin sweep --axis stages=2,3 --out "$d" > "$d/sweep.log" 2>&1
      echo "exit $?"; grep -vE "^\[" "$d/sweep.log" | cut -c1-200 | tail -40 ;;
    racecheck)
      timeout 60 $bin check --dtypes bf16 --suite-hidden 4096 --runs 1 --variants sync --sanitize racecheck --out "$d" > "$d/racecheck.log" 2>&1
      echo "exit $?"; grep -E "^FAIL|racecheck|passed, " "$d/racecheck.log" | cut -c1-200 | tail -25 ;;
    controls)
      timeout 200 $bin check --variants sync,cpasync-cg16-s2,bulk,tma-s3,ctl-cpasync --out "$d" > "$d/check.log" 2>&1
      echo "exit $?"; grep -E "^FAIL|^ok   (control|stress)|passed, " "$d/check.log" | cut -c1-260 | tail -60 ;;
    ncu)
      # NCU_SPECS: variant,dtype,hidden (NCU_TOKENS tokens each, 131072 by default)
      for spec in ${NCU_SPECS:-sync,bf16,4096 cpasync-ca8-s2,bf16,4096 tma-ws-s3,bf16,4096}; do
        set -- $(echo "$spec" | tr , ' '); v=$1-$2-$3
        timeout 60 ncu --clock-control none -k tilepipe_rmsnorm --section SpeedOfLight --section MemoryWorkloadAnalysis \
          --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
          --metrics dram__bytes_read.sum,dram__bytes_write.sum \
          $bin probe "$1" --dtype $2 --hidden $3 --tokens ${NCU_TOKENS:-131072} -q > "$d/$v.ncu.txt" 2>&1
        echo "ncu $v exit $?"
        grep -E "Duration|DRAM Throughput|dram__bytes|L2 Hit|L1/TEX Hit|Registers Per|Memory Throughput|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Achieved Occupancy|SM Frequency|Warp Cycles Per Issued|Stall" "$d/$v.ncu.txt" | head -30
      done ;;
    sanitize)
      timeout 400 $bin check --dtypes bf16 --suite-hidden 4096 --runs 1 --variants sync --sanitize racecheck,synccheck,memcheck --out "$d" > "$d/sanitize.log" 2>&1
      echo "exit $?"; grep -E "^FAIL|racecheck|synccheck|memcheck|passed, " "$d/sanitize.log" | cut -c1-200 | tail -40 ;;
    tiles)
      for tr in 1 2 4 8; do
        timeout 100 $bin run --tile-rows $tr --tokens 131072 --variants sync,cpasync-cg16-s2,cpasync-ca8-s2,mca-barrier-a16-s2,bulk-s2,tma-s4,tma-ws-s3,tma-ws-s4 --out "$d/tr$tr" > "$d/tr$tr.log" 2>&1
        echo "tile rows $tr exit $?"; grep -E "^│ [a-z]" "$d/tr$tr.log" | head -9 | cut -c1-200; grep -E "^CLOCKS|^clocks" "$d/tr$tr.log" | cut -c1-200
      done ;;
    drain)
      timeout 200 $bin check --variants sync,ctl-cpasync-s3-drain-no-commit --out "$d" > "$d/check.log" 2>&1
      echo "exit $?"; grep -E "^FAIL|^ok   control|passed, " "$d/check.log" | cut -c1-260 ;;
    tma)
      timeout 100 $bin run --variants sync,cpasync-cg16-s2,tma-ws-s3,tma-ws-s3-64k --repeats 40 --out "$d" > "$d/run.log" 2>&1
      echo "exit $?"; grep -vE "^\[" "$d/run.log" | grep -E "^│ [a-z]|ceiling|CLOCKS|clocks|repeatab" | cut -c1-200 ;;
    check-both)
      # both workloads' suites at once (two processes, two contexts): correctness only, no timing
      timeout 560 $bin check --out "$d/rmsnorm" > "$d/check.log" 2>&1 &
      timeout 560 $bin check --workload copy --out "$d/copy" > "$d/check-copy.log" 2>&1
      echo "copy exit $?"; wait $!; echo "rmsnorm exit $?"
      for f in check check-copy; do grep -E "^FAIL|passed, " "$d/$f.log" | cut -c1-300 | tail -8; done ;;
    views)
      # views the 16-byte baseline used to refuse: an odd element offset, a padded row stride
      for v in "odd --offset 1" "padded --row-stride 4100"; do
        set -- $v; n=$1; shift
        timeout 140 $bin run --tokens 65536 "$@" --out "$d/$n" > "$d/$n.log" 2>&1
        echo "$n exit $?"; grep -vE "^\[" "$d/$n.log" | grep -E "^│ [a-z]|^(view|problem)|ceiling" | cut -c1-200
      done ;;
    mutants)
      # each protocol bug of scripts/mutate.py through check and run, on the variants it is in
      # (MUTANTS: which, all by default)
      TILEPIPE_BIN=$bin scripts/mutants.sh "$d" ${MUTANTS:-} > "$d/mutants.log" 2>&1
      echo "mutants exit $?"; grep -E "^===|^  (check|run|clean)" "$d/mutants.log" | cut -c1-240 ;;
    interrupt)
      # Ctrl-C (SIGINT) part-way: what was measured is written, the rest is "not finished", exit 130
      timeout --preserve-status -s INT 45 $bin run --out "$d/run" > "$d/run.log" 2>&1
      echo "run exit $?"; ls "$d/run"; grep -E "interrupted|not finished|stopped" "$d/run.log" | cut -c1-200 | head -6
      timeout --preserve-status -s INT 40 $bin sweep --axis stages=2,3 --out "$d/sweep" > "$d/sweep.log" 2>&1
      echo "sweep exit $?"; wc -l < "$d/sweep/sweep.jsonl"; grep -E "interrupted" "$d/sweep.log" | cut -c1-200 ;;
    devices|shards)
      # the x2 machine: a sweep of 110 points on one GPU, then with one worker per GPU (devices);
      # the same sweep as two shards run side by side, merged (shards). The point sets must agree.
      # The cubin cache is filled first, by a one-repeat pass, so that no timed sweep compiles.
      ax="--axis mechanism=sync,regprefetch,cpasync,bulk,tma,tma-ws --axis stages=2,3,4,5,6 --no-probes --repeats 200"
      t0=$(date +%s); timeout 100 $bin sweep $ax --axis tiles=4096 --device 0 --out "$d/warm" > "$d/warm.log" 2>&1; echo "cache fill exit $? in $(( $(date +%s) - t0 )) s"
      ax="$ax --axis tiles=4096,16384,65536,262144,1048576"
      if [ $s = devices ]; then
        t0=$(date +%s); timeout 150 $bin sweep $ax --device 0 --out "$d/one" > "$d/one.log" 2>&1; echo "one GPU exit $? in $(( $(date +%s) - t0 )) s"
        t0=$(date +%s); timeout 120 $bin sweep $ax --devices all --out "$d/all" > "$d/all.log" 2>&1; echo "--devices all exit $? in $(( $(date +%s) - t0 )) s"
        logs="one all"; grep -o '"gpu":"GPU [0-9]' "$d/all/sweep.jsonl" | sort | uniq -c
      else
        t0=$(date +%s)
        timeout 120 $bin sweep $ax --shard 0/2 --device 0 --out "$d/s0" > "$d/s0.log" 2>&1 &
        timeout 120 $bin sweep $ax --shard 1/2 --device 1 --out "$d/s1" > "$d/s1.log" 2>&1; wait
        echo "two shards side by side in $(( $(date +%s) - t0 )) s"
        $bin merge "$d/s0/sweep.jsonl" "$d/s1/sweep.jsonl" --out "$d/merged" > "$d/merge.log" 2>&1; echo "merge exit $?"
        $bin merge "$d/s0/sweep.jsonl" "$d/s0/sweep.jsonl" --out "$d/twice" > "$d/twice.log" 2>&1; echo "merge of one shard twice exit $? (refusal expected)"
        logs="s0 s1 merged"
      fi
      for f in $logs; do echo "$f: $(wc -l < "$d/$f/sweep.jsonl") points, keys $(cut -d'"' -f4 "$d/$f/sweep.jsonl" | sort | md5sum)"; done
      for f in $logs merge twice; do [ -f "$d/$f.log" ] && { echo "-- $f.log"; grep -vE "^\[" "$d/$f.log" | tail -3 | cut -c1-220; }; done ;;
    check-copy-bf16)
      timeout 200 $bin check --workload copy --dtypes bf16 --out "$d" > "$d/check.log" 2>&1
      echo "exit $?"; grep -E "^FAIL|passed, " "$d/check.log" | cut -c1-260 | tail -8
      grep -c "caught 20/20" "$d/check.log" ;;
    check-copy)
      timeout 470 $bin check --workload copy --out "$d" > "$d/check.log" 2>&1
      echo "exit $?"; grep -E "^FAIL|^ok   control|passed, " "$d/check.log" | cut -c1-260 | tail -25 ;;
    run-copy)
      timeout 200 $bin run --workload copy --out "$d" > "$d/run.log" 2>&1
      echo "exit $?"; grep -vE "^\[" "$d/run.log" | grep -E "^│ [a-z]|ceiling|CLOCKS|clocks|repeatab" | cut -c1-200 ;;
    before-after)
      # the default run by the binary of an earlier commit (target/before/tilepipe) and by this one,
      # alternating twice, so that drift in clocks or temperature falls on both alike
      for who in ${BA_RUNS:-before after before2 after2}; do
        b=$bin; case $who in before*) b=$PWD/target/before/tilepipe ;; esac
        timeout 140 $b run --out "$d/$who" > "$d/$who.log" 2>&1
        echo "$who exit $?"; grep -vE "^\[" "$d/$who.log" | grep -E "^│ [a-z]|ceiling|CLOCKS|repeatab" | cut -c1-200
      done ;;
    *) echo "unknown step $s" ;;
  esac
  tar -C "$out" -czf "$out/$s.tgz" "$s" && rm -rf "$d"
done
