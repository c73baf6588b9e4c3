//! Bad command lines, one table: each is refused with exit 2 before any GPU work, and stderr says
//! what was wrong and what is allowed. No GPU is visible, so an input that got as far as
//! opening one would say "no CUDA" (or fail to find a device) instead, and fail here.

use assert_cmd::Command;

/// (arguments, what stderr must say).
const BATTERY: &[(&[&str], &str)] = &[
    // numbers out of range, negative or not numbers, on every command that takes them
    (
        &["run", "--warmup", "-1"],
        "'-1' is not allowed (allowed: a whole number from 0 to 1000)",
    ),
    (
        &["run", "--repeats", "0"],
        "allowed: a whole number from 1 to 200",
    ),
    (
        &["run", "--repeats", "-3"],
        "allowed: a whole number from 1 to 200",
    ),
    (&["run", "--repeats", "x"], "'x' is not allowed"),
    (
        &["run", "--tokens", "-5"],
        "'-5' is not a whole number (allowed: 0, 1, 2, ...)",
    ),
    (&["run", "--tokens", "0"], "allowed: both >= 1"),
    (&["run", "--hidden", "0"], "allowed: both >= 1"),
    (&["run", "--offset", "-1"], "'-1' is not a whole number"),
    (
        &["run", "--seed", "-1"],
        "allowed: a whole number from 0 to 18446744073709551615",
    ),
    (&["run", "--tile-rows", "0"], "allowed: 1..=28"),
    (
        &["sweep", "--repeats", "201"],
        "allowed: a whole number from 1 to 200",
    ),
    (
        &["check", "--runs", "0"],
        "allowed: a whole number from 1 to 10000",
    ),
    (
        &["check", "--runs", "-1"],
        "allowed: a whole number from 1 to 10000",
    ),
    (
        &["probe", "sync", "--runs", "-1"],
        "allowed: a whole number from 1 to 10000",
    ),
    (
        &["probe", "sync", "--wait-timeout-ms", "0"],
        "allowed: a whole number from 1 to 3600000",
    ),
    (
        &["timeline", "--blocks", "0"],
        "'0' is not allowed (allowed: a whole number from 1 to 256)",
    ),
    (
        &["timeline", "--blocks", "-2"],
        "'-2' is not allowed (allowed: a whole number from 1 to 256)",
    ),
    (
        &["timeline", "--tiles", "0"],
        "'0' is not allowed (allowed: a whole number from 1 to 1024)",
    ),
    (
        &["sass", "sync", "--arch", "sm_90", "--context", "-1"],
        "from 0 to 1000",
    ),
    (
        &["lab", "queue", "--slots", "0"],
        "slots 0: allowed a whole number from 1 to 1024",
    ),
    (
        &["lab", "queue", "--slots", "-2"],
        "slots -2: allowed a whole number from 1 to 1024",
    ),
    (
        &["lab", "queue", "--dt", "0"],
        "step 0 s: allowed a number of seconds from 0.001 to 60",
    ),
    (
        &["lab", "queue", "--dt", "-1"],
        "step -1 s: allowed a number of seconds from 0.001 to 60",
    ),
    // names: precisions, workloads, layouts, variants
    (
        &["run", "--dtype", "f64"],
        "unknown dtype 'f64' (allowed: f32, f16, bf16)",
    ),
    (
        &["check", "--dtypes", "f64"],
        "unknown dtype 'f64' (allowed: f32, f16, bf16)",
    ),
    (
        &["check", "--dtypes", ""],
        "unknown dtype '' (allowed: f32, f16, bf16)",
    ),
    (
        &["sass", "sync", "--arch", "sm_90", "--dtype", "f64"],
        "allowed: f32, f16, bf16",
    ),
    (
        &["run", "--workload", "nosuch"],
        "no workload 'nosuch' (allowed: rmsnorm, copy, gemm, attention)",
    ),
    (
        &["run", "--workload", "gemm", "--layout", "xy"],
        "[possible values: kn, nk]",
    ),
    (
        &["run", "--workload", "attention", "--dtype", "f32"],
        "--dtype f32: attention runs on 16-bit tensor-core MMAs (allowed: f16, bf16)",
    ),
    (
        &["run", "--workload", "attention", "--head-dim", "96"],
        "head dim 96: the kernels are built for 64 and 128",
    ),
    (
        &["run", "--workload", "attention", "--seqlen", "0"],
        "seqlen = 0: allowed 1..=1048576",
    ),
    (
        &["run", "--workload", "attention", "--m", "5"],
        "--m not taken by --workload attention (allowed: --dtype, --batch, --heads, --seqlen, --head-dim, --causal)",
    ),
    (
        &["run", "--workload", "gemm", "--causal"],
        "--causal not taken by --workload gemm",
    ),
    (
        &["run", "--seqlen", "64"],
        "--seqlen not taken by --workload rmsnorm",
    ),
    (
        &["check", "--workload", "attention", "--head-dims", "64,96"],
        "'96' is not a head dimension the kernels are built for (allowed: 64, 128)",
    ),
    (
        &["check", "--workload", "attention", "--layouts", "kn"],
        "--layouts not taken by --workload attention (allowed: --head-dims)",
    ),
    (
        &["check", "--workload", "attention", "--dtypes", "f32"],
        "allowed: f16, bf16",
    ),
    (
        &["check", "--workload", "gemm", "--head-dims", "64"],
        "--head-dims not taken by --workload gemm (allowed: --layouts)",
    ),
    (
        &["check", "--workload", "gemm", "--layouts", "xy"],
        "'xy' is not a layout of B (allowed: kn, nk)",
    ),
    (
        &["run", "--variants", "nosuch"],
        "no variant matches 'nosuch' (allowed: a name or prefix of sync",
    ),
    (
        &["sass", "nosuch", "--arch", "sm_90"],
        "no variant matches 'nosuch'",
    ),
    (&["probe", "nosuch"], "no variant matches 'nosuch'"),
    // shapes
    (
        &["run", "--workload", "gemm", "--m", "0"],
        "M = 0: allowed 1..=1048576",
    ),
    (
        &["run", "--workload", "gemm", "--k", "0"],
        "K = 0: allowed 1..=1048576",
    ),
    (&["check", "--suite-hidden", "0"], "allowed: both >= 1"),
    (
        &["check", "--suite-hidden", "abc"],
        "'abc' is not a number (allowed: e.g. 4096,1544)",
    ),
    // flags a workload does not take
    (
        &["run", "--workload", "gemm", "--tokens", "5"],
        "--tokens not taken by --workload gemm (allowed:",
    ),
    (
        &["timeline", "--workload", "gemm", "--tokens", "5"],
        "--tokens not taken by --workload gemm",
    ),
    (
        &["sweep", "--workload", "gemm", "--hidden", "4096"],
        "--hidden not taken by --workload gemm",
    ),
    // sweep axes, shards and devices
    (
        &["sweep", "--axis", "nosuch=1"],
        "unknown axis 'nosuch' for --workload rmsnorm (allowed:",
    ),
    (
        &["sweep", "--axis", "stages="],
        "axis stages has no values (allowed: 1..8",
    ),
    (
        &["sweep", "--axis", "stages=0"],
        "axis stages: '0' is not allowed (allowed: 1..8",
    ),
    (
        &["sweep", "--shard", "2/2"],
        "allowed: I/N with 0 <= I < N <= 65536",
    ),
    (
        &["sweep", "--shard", "x"],
        "allowed: I/N with 0 <= I < N <= 65536",
    ),
    (
        &["sweep", "--devices", ""],
        "'' is not a GPU ordinal; allowed: all, or ordinals like 0,1",
    ),
    // files and folders
    (
        &["run", "--cache-dir", "/proc/version"],
        "is a file, not a folder; allowed: a folder",
    ),
    (&["run", "--out", "/proc/x"], "cannot be created"),
    (
        &["inspect", "/dev/null"],
        "not a CUDA source, cubin, fatbinary or ELF executable/library (allowed:",
    ),
    (
        &["report", "/nonexistent/results.json"],
        "No such file or directory",
    ),
    (
        &["compare", "/nonexistent/a.json", "/nonexistent/b.json"],
        "BASE /nonexistent/a.json",
    ),
    (
        &[
            "merge",
            "/nonexistent/sweep.jsonl",
            "--out",
            "/nonexistent/m",
        ],
        "merge takes the sweep.jsonl files",
    ),
    // arguments missing
    (&["compare", "a"], "required arguments were not provided"),
    (&["inspect"], "required arguments were not provided"),
    (&["merge"], "required arguments were not provided"),
    // run
    (
        &["run", "--warmup", "1001"],
        "'1001' is not allowed (allowed: a whole number from 0 to 1000)",
    ),
    (
        &["run", "--warmup", "x"],
        "'x' is not allowed (allowed: a whole number from 0 to 1000)",
    ),
    (
        &["run", "--repeats", "201"],
        "'201' is not allowed (allowed: a whole number from 1 to 200)",
    ),
    (
        &["run", "--repeats", "1e2"],
        "'1e2' is not allowed (allowed: a whole number from 1 to 200)",
    ),
    (
        &["run", "--repeats", ""],
        "'' is not allowed (allowed: a whole number from 1 to 200)",
    ),
    (
        &["run", "--tokens", "99999999999999999999"],
        "'99999999999999999999' is not a whole number (allowed: 0, 1, 2, ...)",
    ),
    (
        &["run", "--tokens", "1.5"],
        "'1.5' is not a whole number (allowed: 0, 1, 2, ...)",
    ),
    (
        &["run", "--hidden", "-8"],
        "'-8' is not a whole number (allowed: 0, 1, 2, ...)",
    ),
    (
        &["run", "--row-stride", "-1"],
        "'-1' is not a whole number (allowed: 0, 1, 2, ...)",
    ),
    (
        &["run", "--alloc", "-1"],
        "'-1' is not a whole number (allowed: 0, 1, 2, ...)",
    ),
    (
        &["run", "--tile-rows", "-1"],
        "'-1' is not a whole number (allowed: 0, 1, 2, ...)",
    ),
    (
        &["run", "--tile-rows", "x"],
        "'x' is not a whole number (allowed: 0, 1, 2, ...)",
    ),
    (
        &["run", "--seed", "NaN"],
        "'NaN' is not a seed (allowed: a whole number from 0 to 18446744073709551615)",
    ),
    (
        &["run", "--seed", "18446744073709551616"],
        "'18446744073709551616' is not a seed (allowed: a whole number from 0 to 18446744073709551615)",
    ),
    (
        &["run", "--seed", "1e3"],
        "'1e3' is not a seed (allowed: a whole number from 0 to 18446744073709551615)",
    ),
    (
        &["run", "--seed", ""],
        "'' is not a seed (allowed: a whole number from 0 to 18446744073709551615)",
    ),
    (
        &["run", "--hidden", "7"],
        "hidden 7 is not a multiple of 8: every kernel reads rows as 16-byte vectors (8 bf16 elements); allowed: hidden = 8k",
    ),
    (
        &["run", "--dtype", "f32", "--hidden", "6"],
        "hidden 6 is not a multiple of 4: every kernel reads rows as 16-byte vectors (4 f32 elements); allowed: hidden = 4k",
    ),
    (
        &["run", "--hidden", "116232"],
        "hidden 116232: a row of bf16 must hold at least one element and fit in the 232448 bytes",
    ),
    (
        &["run", "--dtype", "f32", "--hidden", "58116"],
        "allowed: hidden = 1..=58112",
    ),
    (
        &["run", "--row-stride", "4095"],
        "row stride 4095 is smaller than hidden 4096: rows would overlap; allowed: stride >= hidden",
    ),
    (
        &["run", "--row-stride", "0"],
        "rows would overlap; allowed: stride >= hidden",
    ),
    (
        &["run", "--out-row-stride", "4095"],
        "output row stride 4095 is smaller than hidden 4096: rows would overlap; allowed: --out-row-stride >= hidden",
    ),
    (&["run", "--out-offset", "-1"], "'-1' is not a whole number"),
    (
        &["run", "--out-offset", "18446744073709551615"],
        "the output view (offset 18446744073709551615 + 262143 rows x stride 4096 + hidden 4096)",
    ),
    (
        &["run", "--workload", "gemm", "--out-row-stride", "4100"],
        "--out-row-stride not taken by --workload gemm",
    ),
    (
        &["run", "--hidden", "4096", "--alloc", "10"],
        "but the allocation holds 10; allowed: offset + (tokens-1) x stride + hidden <= allocation",
    ),
    (
        &["run", "--tokens", "1", "--hidden", "8", "--alloc", "7"],
        "the view reaches element 8 (offset 0 + 0 rows x stride 8 + hidden 8) but the allocation holds 7",
    ),
    (
        &["run", "--offset", "18446744073709551615"],
        "does not fit in 64 bits; allowed: offset + (tokens-1) x stride + hidden <= 18446744073709551615",
    ),
    (
        &["run", "--alloc", "18446744073709551615"],
        "do not fit in 64-bit byte counts; allowed: (allocation + 2 x tokens x hidden) x 2 <= 18446744073709551615",
    ),
    (
        &["run", "--tokens", "2147483648"],
        "tokens 2147483648 is more than the kernels' 32-bit row and tile counts hold; allowed: tokens = 1..=2147483647",
    ),
    (
        &["run", "--tile-rows", "29"],
        "--tile-rows 29: a slot holds tile rows x hidden 4096 x 2 bytes",
    ),
    (&["run", "--tile-rows", "100000"], "allowed: 1..=28"),
    (
        &["run", "--dtype", "f32", "--tile-rows", "15"],
        "allowed: 1..=14",
    ),
    (
        &["run", "--workload", "gemm", "--m", "1048577"],
        "M = 1048577: allowed 1..=1048576",
    ),
    (
        &["run", "--workload", "gemm", "--n", "0"],
        "N = 0: allowed 1..=1048576",
    ),
    (
        &["run", "--workload", "gemm", "--n", "1048577"],
        "N = 1048577: allowed 1..=1048576",
    ),
    (
        &["run", "--workload", "gemm", "--k", "1048577"],
        "K = 1048577: allowed 1..=1048576",
    ),
    (
        &["run", "--workload", "gemm", "--m", "-1"],
        "'-1' is not a whole number (allowed: 0, 1, 2, ...)",
    ),
    (
        &["run", "--workload", "gemm", "--m", "1.5"],
        "'1.5' is not a whole number (allowed: 0, 1, 2, ...)",
    ),
    (
        &[
            "run",
            "--workload",
            "gemm",
            "--m",
            "1048576",
            "--n",
            "1048576",
            "--k",
            "1048576",
        ],
        "of host memory needed",
    ),
    (
        &["run", "--workload", "copy", "--hidden", "7"],
        "hidden 7 is not a multiple of 8",
    ),
    (
        &["run", "--workload", "copy", "--tokens", "0"],
        "allowed: both >= 1",
    ),
    (
        &["run", "--dtype", ""],
        "unknown dtype '' (allowed: f32, f16, bf16)",
    ),
    (
        &["run", "--dtype", "int8"],
        "unknown dtype 'int8' (allowed: f32, f16, bf16)",
    ),
    (
        &["run", "--workload", ""],
        "no workload '' (allowed: rmsnorm, copy, gemm, attention)",
    ),
    (
        &["run", "--workload", "GEMM"],
        "no workload 'GEMM' (allowed: rmsnorm, copy, gemm, attention)",
    ),
    (
        &["run", "--format", "xml"],
        "[possible values: table, markdown, csv, json]",
    ),
    (&["run", "--peers", "nosuch"], "[possible values: torch]"),
    (
        &["run", "--workload", "gemm", "--layout", "KN"],
        "[possible values: kn, nk]",
    ),
    (
        &["run", "--variants", ""],
        "an empty list of variants (''): allowed: names or prefixes, comma-separated, or leave the flag out for all",
    ),
    (
        &["run", "--variants", ","],
        "an empty list of variants (','): allowed: names or prefixes",
    ),
    (
        &["run", "--variants", " "],
        "an empty list of variants (' ')",
    ),
    (
        &["run", "--variants", "sync,nosuch"],
        "no variant matches 'nosuch' (allowed: a name or prefix of sync",
    ),
    (
        &["run", "--timeline", "nosuch"],
        "no variant matches 'nosuch' (allowed: a name or prefix of sync",
    ),
    (
        &["run", "--timeline", "sync,nosuch"],
        "no variant matches 'nosuch'",
    ),
    (
        &["run", "--timeline", ","],
        "an empty list of variants (',')",
    ),
    (
        &["run", "--workload", "gemm", "--variants", "nosuch"],
        "no variant matches 'nosuch' (allowed: a name or prefix of sync, regprefetch, cpasync-cg16-s2",
    ),
    (
        &["run", "--workload", "copy", "--variants", "tma-wgmma-s2"],
        "no variant matches 'tma-wgmma-s2'",
    ),
    (
        &[
            "run",
            "--workload",
            "gemm",
            "--dtype",
            "f32",
            "--variants",
            "tma-wgmma-s2",
        ],
        "no variant matches 'tma-wgmma-s2'",
    ),
    (
        &["run", "--workload", "gemm", "--row-stride", "9"],
        "--row-stride not taken by --workload gemm (allowed: --dtype, --m, --n, --k, --layout)",
    ),
    (
        &["run", "--workload", "gemm", "--offset", "1"],
        "--offset not taken by --workload gemm (allowed: --dtype, --m, --n, --k, --layout)",
    ),
    (
        &["run", "--workload", "gemm", "--tile-rows", "2"],
        "--tile-rows not taken by --workload gemm",
    ),
    (
        &["run", "--workload", "gemm", "--alloc", "100"],
        "--alloc not taken by --workload gemm",
    ),
    (
        &["run", "--workload", "gemm", "--hidden", "4096"],
        "--hidden not taken by --workload gemm",
    ),
    (
        &["run", "--m", "5"],
        "--m not taken by --workload rmsnorm (allowed: --dtype, --tokens, --hidden, --row-stride, --offset, --alloc, --out-row-stride, --out-offset, --tile-rows)",
    ),
    (&["run", "--n", "5"], "--n not taken by --workload rmsnorm"),
    (&["run", "--k", "5"], "--k not taken by --workload rmsnorm"),
    (
        &["run", "--layout", "nk"],
        "--layout not taken by --workload rmsnorm",
    ),
    (
        &["run", "--workload", "copy", "--m", "5"],
        "--m not taken by --workload copy",
    ),
    (
        &["run", "--workload", "copy", "--layout", "kn"],
        "--layout not taken by --workload copy",
    ),
    (
        &["run", "--out", "/proc/version"],
        "output folder /proc/version: is a file, not a folder; allowed: a folder that exists or can be created, and can be written",
    ),
    (
        &["run", "--out", "Cargo.toml"],
        "output folder Cargo.toml: is a file, not a folder",
    ),
    (
        &["run", "--out", "Cargo.toml/x"],
        "output folder Cargo.toml/x: cannot be created",
    ),
    (
        &["run", "--out", "/proc/version/x"],
        "cannot be created (Not a directory",
    ),
    (
        &["run", "--cache-dir", "Cargo.toml"],
        "cubin cache folder Cargo.toml: is a file, not a folder; allowed: a folder that exists or can be created, and",
    ),
    (
        &["run", "--cache-dir", "/proc/x"],
        "cubin cache folder /proc/x: cannot be created (No such file or directory (os error 2)); allowed: a folder",
    ),
    (
        &["run", "--cache-dir", "/proc"],
        "cubin cache folder /proc: cannot be written (No such file or directory (os error 2)); allowed: a folder that",
    ),
    (
        &["run", "--out", ""],
        "a value is required for '--out <OUT>' but none was supplied",
    ),
    (
        &["run", "--cache-dir", ""],
        "a value is required for '--cache-dir <CACHE_DIR>'",
    ),
    (&["run", "--nosuch"], "unexpected argument '--nosuch' found"),
    (&["run", "extra"], "unexpected argument 'extra' found"),
    (
        &["run", "--explain-timing=yes"],
        "unexpected value 'yes' for '--explain-timing'",
    ),
    (
        &["run", "--tokens"],
        "a value is required for '--tokens <TOKENS>'",
    ),
    // check
    (
        &["check", "--runs", "10001"],
        "'10001' is not allowed (allowed: a whole number from 1 to 10000)",
    ),
    (
        &["check", "--runs", "x"],
        "'x' is not allowed (allowed: a whole number from 1 to 10000)",
    ),
    (
        &["check", "--dtypes", "f32,"],
        "unknown dtype '' (allowed: f32, f16, bf16)",
    ),
    (
        &["check", "--dtypes", ","],
        "unknown dtype '' (allowed: f32, f16, bf16)",
    ),
    (
        &["check", "--dtypes", "f64,f32"],
        "unknown dtype 'f64' (allowed: f32, f16, bf16)",
    ),
    (
        &["check", "--suite-hidden", ""],
        "--suite-hidden: '' is not a number (allowed: e.g. 4096,1544)",
    ),
    (
        &["check", "--suite-hidden", "4096,"],
        "--suite-hidden: '' is not a number",
    ),
    (
        &["check", "--suite-hidden", "-8"],
        "--suite-hidden: '-8' is not a number",
    ),
    (
        &["check", "--suite-hidden", "7"],
        "hidden 7 is not a multiple of 4",
    ),
    (
        &["check", "--workload", "gemm", "--suite-hidden", "4096"],
        "--suite-hidden not taken by --workload gemm (allowed: --layouts)",
    ),
    (
        &["check", "--layouts", "nk"],
        "--layouts not taken by --workload rmsnorm (allowed: --suite-hidden)",
    ),
    (
        &["check", "--workload", "copy", "--layouts", "kn"],
        "--layouts not taken by --workload copy",
    ),
    (
        &["check", "--workload", "gemm", "--layouts", ""],
        "--layouts: '' is not a layout of B (allowed: kn, nk)",
    ),
    (
        &["check", "--workload", "gemm", "--layouts", "kn,"],
        "'' is not a layout of B (allowed: kn, nk)",
    ),
    (
        &["check", "--workload", "gemm", "--layouts", "KN"],
        "'KN' is not a layout of B (allowed: kn, nk)",
    ),
    (
        &["check", "--sanitize", "nosuch"],
        "unknown sanitizer tool 'nosuch' (allowed: racecheck, synccheck, memcheck)",
    ),
    (
        &["check", "--sanitize", ""],
        "an empty list of sanitizer tools (''): allowed: racecheck, synccheck, memcheck, comma-separated",
    ),
    (
        &["check", "--sanitize", ","],
        "an empty list of sanitizer tools (',')",
    ),
    (
        &["check", "--sanitize", "racecheck,nosuch"],
        "unknown sanitizer tool 'nosuch'",
    ),
    (
        &[
            "check",
            "--sanitize",
            "racecheck",
            "--sanitize-variants",
            "nosuch",
        ],
        "no variant matches 'nosuch'",
    ),
    (
        &[
            "check",
            "--sanitize",
            "racecheck",
            "--sanitize-variants",
            "",
        ],
        "an empty list of variants ('')",
    ),
    (
        &["check", "--variants", ""],
        "an empty list of variants ('')",
    ),
    (
        &["check", "--variants", "nosuch"],
        "no variant matches 'nosuch' (allowed: a name or prefix of sync",
    ),
    (
        &[
            "check",
            "--workload",
            "copy",
            "--variants",
            "ctl-tma-wrong-box",
        ],
        "no variant matches 'ctl-tma-wrong-box'",
    ),
    (
        &[
            "check",
            "--workload",
            "gemm",
            "--dtypes",
            "f32",
            "--variants",
            "tma-wgmma",
        ],
        "no variant matches 'tma-wgmma'",
    ),
    (
        &["check", "--out", "/proc/version"],
        "output folder /proc/version: is a file, not a folder",
    ),
    (
        &["check", "--out", "/proc/x"],
        "output folder /proc/x: cannot be created",
    ),
    (
        &["check", "--out", "Cargo.toml"],
        "output folder Cargo.toml: is a file, not a folder",
    ),
    (
        &["check", "--cache-dir", "Cargo.toml"],
        "cubin cache folder Cargo.toml: is a file, not a folder; allowed: a folder that exists or can be created, and",
    ),
    (
        &["check", "--format", "xml"],
        "[possible values: table, markdown, csv, json]",
    ),
    (
        &["check", "--workload", "nosuch"],
        "no workload 'nosuch' (allowed: rmsnorm, copy, gemm, attention)",
    ),
    (&["check", "extra"], "unexpected argument 'extra' found"),
    // sweep
    (
        &["sweep", "--axis", "stages=9"],
        "axis stages: '9' is not allowed (allowed: 1..8, comma-separated, or a..b ranges, e.g. stages=1..4,6)",
    ),
    (
        &["sweep", "--axis", "stages=1..9"],
        "axis stages: '1..9' is not allowed (allowed: 1..8",
    ),
    (
        &["sweep", "--axis", "stages=6..1"],
        "axis stages: '6..1' is not allowed",
    ),
    (
        &["sweep", "--axis", "stages=1.."],
        "axis stages: '1..' is not allowed",
    ),
    (
        &["sweep", "--axis", "stages=..3"],
        "axis stages: '..3' is not allowed",
    ),
    (
        &["sweep", "--axis", "stages=a..b"],
        "axis stages: 'a..b' is not allowed",
    ),
    (
        &["sweep", "--axis", "stages=-1"],
        "axis stages: '-1' is not allowed",
    ),
    (
        &["sweep", "--axis", "stages"],
        "--axis 'stages': expected name=values, e.g. stages=1..6 or tiles=16,1024",
    ),
    (&["sweep", "--axis", ""], "--axis '': expected name=values"),
    (
        &["sweep", "--axis", "=1"],
        "unknown axis '' for --workload rmsnorm (allowed: mechanism, stages, tiles, tile_rows, dtype)",
    ),
    (
        &["sweep", "--axis", "STAGES=1"],
        "unknown axis 'STAGES' for --workload rmsnorm",
    ),
    (
        &["sweep", "--axis", "k=4"],
        "unknown axis 'k' for --workload rmsnorm (allowed: mechanism, stages, tiles, tile_rows, dtype)",
    ),
    (
        &["sweep", "--workload", "gemm", "--axis", "tiles=4"],
        "unknown axis 'tiles' for --workload gemm (allowed: mechanism, stages, k, dtype)",
    ),
    (
        &["sweep", "--workload", "gemm", "--axis", "tile_rows=1"],
        "unknown axis 'tile_rows' for --workload gemm (allowed: mechanism, stages, k, dtype)",
    ),
    (
        &["sweep", "--workload", "copy", "--axis", "k=4"],
        "unknown axis 'k' for --workload copy",
    ),
    (
        &["sweep", "--axis", "mechanism=nosuch"],
        "axis mechanism: 'nosuch' is not allowed (allowed: sync, regprefetch, direct, cpasync",
    ),
    (
        &["sweep", "--axis", "mechanism="],
        "axis mechanism has no values (allowed: sync, regprefetch",
    ),
    (
        &["sweep", "--workload", "copy", "--axis", "mechanism=wgmma"],
        "axis mechanism: 'wgmma' is not allowed",
    ),
    (
        &["sweep", "--axis", "dtype=f64"],
        "axis dtype: 'f64' is not allowed (allowed: f32, f16, bf16)",
    ),
    (
        &["sweep", "--axis", "dtype="],
        "axis dtype has no values (allowed: f32, f16, bf16)",
    ),
    (
        &["sweep", "--axis", "tiles=0"],
        "axis tiles: '0' is not allowed (allowed: whole numbers from 1, comma-separated, or a..b ranges, e.g. tiles=4,16,1024)",
    ),
    (
        &["sweep", "--axis", "tiles=abc"],
        "axis tiles: 'abc' is not allowed",
    ),
    (
        &["sweep", "--axis", "tiles=1..99999999999999999999"],
        "axis tiles: '1..99999999999999999999' is not allowed",
    ),
    (
        &["sweep", "--axis", "tiles=1..1000000000"],
        "axis tiles: more than 4096 values",
    ),
    (
        &["sweep", "--axis", "tile_rows=0"],
        "axis tile_rows: '0' is not allowed",
    ),
    (
        &["sweep", "--axis", "tile_rows=29"],
        "--tile-rows 29: a slot holds tile rows x hidden 4096 x 2 bytes",
    ),
    (
        &["sweep", "--workload", "gemm", "--axis", "k=0"],
        "axis k: '0' is not allowed (allowed: whole numbers from 1",
    ),
    (
        &["sweep", "--workload", "gemm", "--axis", "k=32,abc"],
        "axis k: 'abc' is not allowed (allowed: whole numbers from 1, comma-separated, or a..b ranges, e.g. k=4,16,1024)",
    ),
    (
        &["sweep", "--workload", "gemm", "--axis", "k=1..100000000"],
        "axis k: more than 4096 values",
    ),
    (
        &["sweep", "--axis", "stages=1..6", "--axis", "stages=2"],
        "--axis stages is given twice: allowed: each axis once, with all its values (e.g. --axis stages=1,2,4)",
    ),
    (
        &["sweep", "--axis", "tiles=4", "--axis", "tiles=8"],
        "--axis tiles is given twice",
    ),
    (
        &["sweep", "--axis", "tile_rows=2", "--tile-rows", "4"],
        "sweep sets each point's size from its axes, so --tile-rows cannot be taken",
    ),
    (
        &["sweep", "--tokens", "0"],
        "sweep sets each point's size from its axes, so --tokens cannot be taken",
    ),
    (
        &["sweep", "--row-stride", "8192"],
        "so --row-stride cannot be taken",
    ),
    (&["sweep", "--offset", "8"], "so --offset cannot be taken"),
    (&["sweep", "--alloc", "8"], "so --alloc cannot be taken"),
    (
        &["sweep", "--out-offset", "3"],
        "so --out-offset cannot be taken",
    ),
    (
        &["sweep", "--workload", "gemm", "--k", "1024"],
        "so --k cannot be taken",
    ),
    (
        &["sweep", "--workload", "gemm", "--tokens", "5"],
        "sweep sets each point's size from its axes, so --tokens cannot be taken",
    ),
    (
        &["sweep", "--workload", "gemm", "--m", "0"],
        "M = 0: allowed 1..=1048576",
    ),
    (
        &["sweep", "--m", "5"],
        "--m not taken by --workload rmsnorm",
    ),
    (
        &["sweep", "--hidden", "7"],
        "hidden 7 is not a multiple of 8",
    ),
    (
        &["sweep", "--shard", "0/0"],
        "--shard 0/0: allowed: I/N with 0 <= I < N <= 65536, e.g. 0/4",
    ),
    (
        &["sweep", "--shard", "0/65537"],
        "--shard 0/65537: allowed: I/N with 0 <= I < N <= 65536",
    ),
    (&["sweep", "--shard", "/"], "--shard /: allowed: I/N"),
    (&["sweep", "--shard", "0/"], "--shard 0/: allowed: I/N"),
    (&["sweep", "--shard", "1"], "--shard 1: allowed: I/N"),
    (
        &["sweep", "--shard", "0/2/3"],
        "--shard 0/2/3: allowed: I/N",
    ),
    (
        &["sweep", "--repeats", "0"],
        "'0' is not allowed (allowed: a whole number from 1 to 200)",
    ),
    (
        &["sweep", "--seed", "NaN"],
        "'NaN' is not a seed (allowed: a whole number from 0 to 18446744073709551615)",
    ),
    (
        &["sweep", "--out", "/proc/version"],
        "output folder /proc/version: is a file, not a folder",
    ),
    (
        &["sweep", "--out", "Cargo.toml"],
        "output folder Cargo.toml: is a file, not a folder",
    ),
    (
        &["sweep", "--out", "/proc/x"],
        "output folder /proc/x: cannot be created",
    ),
    (
        &["sweep", "--out", "tests/fixtures"],
        "tests/fixtures/sweep.jsonl exists: pass --resume to continue it, or another --out",
    ),
    (
        &["sweep", "--format", "xml"],
        "[possible values: table, markdown, csv, json]",
    ),
    (
        &["sweep", "--ks", "32,abc"],
        "unexpected argument '--ks' found",
    ),
    // probe
    (
        &["probe", "sync", "--stress", "4"],
        "'4' is not allowed (allowed: a whole number from 0 to 3)",
    ),
    (
        &["probe", "sync", "--stress", "-1"],
        "'-1' is not allowed (allowed: a whole number from 0 to 3)",
    ),
    (
        &["probe", "sync", "--blocks", "0"],
        "'0' is not allowed (allowed: a whole number from 1 to 65536)",
    ),
    (
        &["probe", "sync", "--blocks", "99999999999"],
        "'99999999999' is not allowed (allowed: a whole number from 1 to 65536)",
    ),
    (
        &["probe", "sync", "--wait-timeout-ms", "3600001"],
        "allowed: a whole number from 1 to 3600000",
    ),
    (
        &["probe", "sync", "--runs", "10001"],
        "allowed: a whole number from 1 to 10000",
    ),
    (&["probe", "sync", "--seed", "x"], "'x' is not a seed"),
    (&["probe", "sync", "--tokens", "0"], "allowed: both >= 1"),
    (
        &["probe", "sync", "--workload", "gemm", "--tokens", "5"],
        "--tokens not taken by --workload gemm",
    ),
    (
        &["probe", "sync", "--m", "5"],
        "--m not taken by --workload rmsnorm",
    ),
    (
        &["probe", "sync", "--dtype", "f64"],
        "unknown dtype 'f64' (allowed: f32, f16, bf16)",
    ),
    (
        &["probe", "sync", "--cache-dir", "Cargo.toml"],
        "cubin cache folder Cargo.toml: is a file, not a folder; allowed: a folder that exists or can be created, and",
    ),
    (&["probe", "sync", "--tile-rows", "29"], "allowed: 1..=28"),
    (
        &["probe", "cpasync"],
        "'cpasync' names no one variant: the full name is needed (allowed: one of cpasync-cg16-s2, cpasync-cg16-s2-el,",
    ),
    (&["probe", ""], "an empty list of variants ('')"),
    (
        &["probe", "tma-wgmma-s2"],
        "no variant matches 'tma-wgmma-s2'",
    ),
    (
        &["probe", "--workload", "copy", "ctl-tma-wrong-box"],
        "no variant matches 'ctl-tma-wrong-box'",
    ),
    (
        &["probe", "sync", "extra"],
        "unexpected argument 'extra' found",
    ),
    (&["probe"], "required arguments were not provided"),
    // timeline
    (
        &["timeline", "nosuch"],
        "no variant matches 'nosuch' (allowed: a name or prefix of sync",
    ),
    (&["timeline", "sync,nosuch"], "no variant matches 'nosuch'"),
    (&["timeline", ""], "an empty list of variants ('')"),
    (
        &["timeline", "--workload", "gemm", "nosuch"],
        "no variant matches 'nosuch'",
    ),
    (
        &["timeline", "--workload", "copy", "tma-wgmma-s2"],
        "no variant matches 'tma-wgmma-s2'",
    ),
    (
        &["timeline", "--blocks", "257"],
        "'257' is not allowed (allowed: a whole number from 1 to 256)",
    ),
    (
        &["timeline", "--tiles", "1025"],
        "'1025' is not allowed (allowed: a whole number from 1 to 1024)",
    ),
    (
        &["timeline", "--tiles", "-1"],
        "'-1' is not allowed (allowed: a whole number from 1 to 1024)",
    ),
    (
        &["timeline", "--out", "/proc/version"],
        "output folder /proc/version: is a file, not a folder",
    ),
    (
        &["timeline", "--out", "/proc/x"],
        "output folder /proc/x: cannot be created",
    ),
    (
        &["timeline", "--cache-dir", "Cargo.toml"],
        "cubin cache folder Cargo.toml: is a file, not a folder; allowed: a folder that exists or can be created, and",
    ),
    (
        &["timeline", "--m", "5"],
        "--m not taken by --workload rmsnorm",
    ),
    (
        &["timeline", "--workload", "gemm", "--tile-rows", "2"],
        "--tile-rows not taken by --workload gemm",
    ),
    (
        &["timeline", "--dtype", "f64"],
        "unknown dtype 'f64' (allowed: f32, f16, bf16)",
    ),
    (&["timeline", "--tokens", "0"], "allowed: both >= 1"),
    (&["timeline", "--tile-rows", "29"], "allowed: 1..=28"),
    (&["timeline", "--seed", "x"], "'x' is not a seed"),
    // sass
    (
        &["sass", "sync", "--arch", "sm_99"],
        "unknown architecture 'sm_99' (allowed: sm_50, sm_52",
    ),
    (
        &["sass", "sync", "--arch", ""],
        "unknown architecture '' (allowed:",
    ),
    (
        &["sass", "sync", "--arch", "compute_90"],
        "unknown architecture 'compute_90'",
    ),
    (
        &["sass", "sync", "--arch", "sm_90", "--context", "1001"],
        "'1001' is not allowed (allowed: a whole number from 0 to 1000)",
    ),
    (
        &["sass", "sync", "--arch", "sm_90", "--context", "x"],
        "'x' is not allowed (allowed: a whole number from 0 to 1000)",
    ),
    (
        &["sass", "", "--arch", "sm_90"],
        "an empty list of variants ('')",
    ),
    (
        &["sass", "ctl-skip-wait", "--arch", "sm_90"],
        "no variant matches 'ctl-skip-wait'",
    ),
    (
        &["sass", "tma-ws-s3", "--arch", "sm_80"],
        "tma-ws-s3: tma needs sm_90 or newer; this build is for sm_80 (allowed: --arch sm_90 and newer)",
    ),
    (
        &[
            "sass",
            "tma-wgmma-s2",
            "--arch",
            "sm_80",
            "--workload",
            "gemm",
        ],
        "tma-wgmma-s2: tma needs sm_90 or newer",
    ),
    (
        &["sass", "cpasync-cg16-s2", "--arch", "sm_70"],
        "cpasync-cg16-s2: cpasync needs sm_80 or newer; this build is for sm_70 (allowed: --arch sm_80 and newer)",
    ),
    (
        &["sass", "sync", "--arch", "sm_50"],
        "sync: sync needs sm_70 or newer; this build is for sm_50 (allowed: --arch sm_70 and newer)",
    ),
    (
        &["sass", "sync", "--arch", "sm_90", "--tokens", "0"],
        "allowed: both >= 1",
    ),
    (
        &["sass", "sync", "--arch", "sm_90", "--hidden", "7"],
        "hidden 7 is not a multiple of 8",
    ),
    (
        &["sass", "sync", "--arch", "sm_90", "--tile-rows", "29"],
        "allowed: 1..=28",
    ),
    (
        &["sass", "sync", "--arch", "sm_90", "--m", "5"],
        "--m not taken by --workload rmsnorm",
    ),
    (
        &[
            "sass",
            "sync",
            "--arch",
            "sm_90",
            "--workload",
            "gemm",
            "--tokens",
            "5",
        ],
        "--tokens not taken by --workload gemm",
    ),
    (
        &[
            "sass",
            "sync",
            "--arch",
            "sm_90",
            "--workload",
            "gemm",
            "--k",
            "0",
        ],
        "K = 0: allowed 1..=1048576",
    ),
    (
        &["sass", "sync", "--arch", "sm_90", "--workload", "nosuch"],
        "no workload 'nosuch' (allowed: rmsnorm, copy, gemm, attention)",
    ),
    (
        &["sass", "sync", "--arch", "sm_90", "--seed", "x"],
        "'x' is not a seed",
    ),
    (
        &["sass", "sync", "--arch", "sm_90", "--listing", ""],
        "a value is required for '--listing <LISTING>'",
    ),
    (&["sass", "sync", "--tokens", "0"], "allowed: both >= 1"),
    (&["sass"], "required arguments were not provided"),
    // inspect
    (
        &["inspect", "/nonexistent/x.cu"],
        "/nonexistent/x.cu: No such file or directory",
    ),
    (
        &["inspect", "src"],
        "src: no Triton kernel in this folder (allowed: a Triton cache folder",
    ),
    (
        &["inspect", "Cargo.toml"],
        "Cargo.toml: not a CUDA source, cubin, fatbinary or ELF executable/library (allowed: a .cu file, a cubin",
    ),
    (&["inspect", ""], "a value is required for '<PATH>'"),
    (
        &["inspect", "tests/fixtures/inspect/empty.cu"],
        "empty.cu: nothing to judge: neither it nor a header it includes declares a __global__ function (allowed: a .cu with a __global__ function",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--arch",
            "sm_99",
        ],
        "unknown architecture 'sm_99'",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--claim",
            "nosuch",
        ],
        "unknown claim 'nosuch' (allowed: cpasync16, cpasync8, cpasync4, cpasync, bulk, tma, wgmma, mma",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--claim",
            "",
        ],
        "unknown claim '' (allowed:",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--block-size",
            "0",
        ],
        "'0' is not allowed (allowed: a whole number from 1 to 1024)",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--block-size",
            "1025",
        ],
        "'1025' is not allowed (allowed: a whole number from 1 to 1024)",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--block-size",
            "-1",
        ],
        "'-1' is not allowed (allowed: a whole number from 1 to 1024)",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--block-size",
            "128",
            "--dynamic-smem",
            "-1",
        ],
        "'-1' is not allowed (allowed: a whole number from 0 to 262144)",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--block-size",
            "128",
            "--dynamic-smem",
            "99999999999",
        ],
        "'99999999999' is not allowed (allowed: a whole number from 0 to 262144)",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--dynamic-smem",
            "1",
        ],
        "--block-size <BLOCK_SIZE>",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--fail-on",
            "nosuch",
        ],
        "unknown --fail-on 'nosuch' (allowed: claims, hazards, both)",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--fail-on",
            "",
        ],
        "unknown --fail-on '' (allowed: claims, hazards, both)",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--format",
            "xml",
        ],
        "[possible values: text, json]",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--kernel",
            "",
        ],
        "--kernel is empty (allowed: a kernel's symbol, its name or part of it, or a regular expression)",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--kernel",
            "nosuch",
        ],
        "no kernel matching 'nosuch' in tests/fixtures/inspect/cpasync.sm_80.cubin (allowed: a symbol, a name or part of one, or a regular expression",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "tests/fixtures/inspect/mma.cu",
        ],
        "unexpected argument 'tests/fixtures/inspect/mma.cu' found",
    ),
    // report
    (&["report", "src"], "src: Is a directory"),
    (
        &["report", "tests/fixtures/sweep.jsonl"],
        "this is a sweep's sweep.jsonl (`tilepipe model --from` and `tilepipe merge` read it), not a run's results.json",
    ),
    (
        &["report", "tests/fixtures/gemm-sweep-bf16.jsonl"],
        "this is a sweep's sweep.jsonl",
    ),
    (
        &["report", "tests/fixtures/inspect/cpasync.sm_80.cubin"],
        "not text: a results.json is JSON",
    ),
    (
        &["report", "tests/fixtures/results.json", "--out", "/proc/x"],
        "output folder /proc/x: cannot be created",
    ),
    (
        &[
            "report",
            "tests/fixtures/results.json",
            "--out",
            "/proc/version",
        ],
        "output folder /proc/version: is a file, not a folder",
    ),
    (
        &[
            "report",
            "tests/fixtures/results.json",
            "--out",
            "Cargo.toml",
        ],
        "output folder Cargo.toml: is a file, not a folder",
    ),
    (
        &[
            "report",
            "tests/fixtures/results.json",
            "--out",
            "Cargo.toml/x.html",
        ],
        "output folder Cargo.toml: is a file, not a folder",
    ),
    (
        &[
            "report",
            "tests/fixtures/results.json",
            "--out",
            "/proc/x.html",
        ],
        "output folder /proc: cannot be written",
    ),
    (
        &[
            "report",
            "tests/fixtures/results.json",
            "tests/fixtures/results.json",
        ],
        "unexpected argument 'tests/fixtures/results.json' found",
    ),
    (&["report", ""], "a value is required for '<RESULTS>'"),
    (&["report"], "required arguments were not provided"),
    // compare
    (
        &[
            "compare",
            "tests/fixtures/results.json",
            "tests/fixtures/gemm-h200.json",
        ],
        "BASE is a rmsnorm run and NEW a gemm run: compare takes two runs of one workload",
    ),
    (
        &[
            "compare",
            "tests/fixtures/gemm-h200.json",
            "tests/fixtures/results.json",
        ],
        "BASE is a gemm run and NEW a rmsnorm run",
    ),
    (
        &[
            "compare",
            "tests/fixtures/results.json",
            "tests/fixtures/sweep.jsonl",
        ],
        "NEW tests/fixtures/sweep.jsonl: this is a sweep's sweep.jsonl",
    ),
    (
        &[
            "compare",
            "tests/fixtures/sweep.jsonl",
            "tests/fixtures/results.json",
        ],
        "BASE tests/fixtures/sweep.jsonl: this is a sweep's sweep.jsonl",
    ),
    (
        &["compare", "tests/fixtures/results.json", "src"],
        "NEW src: Is a directory",
    ),
    (
        &["compare", "src", "tests/fixtures/results.json"],
        "BASE src: Is a directory",
    ),
    (
        &[
            "compare",
            "tests/fixtures/results.json",
            "/nonexistent/b.json",
        ],
        "NEW /nonexistent/b.json: No such file or directory",
    ),
    (
        &[
            "compare",
            "tests/fixtures/results.json",
            "tests/fixtures/results.json",
            "--threshold",
            "-1",
        ],
        "'-1' is not a percentage (allowed: a number >= 0)",
    ),
    (
        &[
            "compare",
            "tests/fixtures/results.json",
            "tests/fixtures/results.json",
            "--threshold",
            "nan",
        ],
        "'nan' is not a percentage (allowed: a number >= 0)",
    ),
    (
        &[
            "compare",
            "tests/fixtures/results.json",
            "tests/fixtures/results.json",
            "--threshold",
            "inf",
        ],
        "'inf' is not a percentage",
    ),
    (
        &[
            "compare",
            "tests/fixtures/results.json",
            "tests/fixtures/results.json",
            "--threshold",
            "x",
        ],
        "'x' is not a percentage",
    ),
    (
        &[
            "compare",
            "tests/fixtures/results.json",
            "tests/fixtures/results.json",
            "--threshold",
            "1e309",
        ],
        "'1e309' is not a percentage",
    ),
    (
        &[
            "compare",
            "tests/fixtures/results.json",
            "tests/fixtures/results.json",
            "--format",
            "xml",
        ],
        "[possible values: table, markdown, csv, json]",
    ),
    (
        &[
            "compare",
            "tests/fixtures/results.json",
            "tests/fixtures/results.json",
            "--out",
            "/proc/x",
        ],
        "output folder /proc/x: cannot be created",
    ),
    (
        &[
            "compare",
            "tests/fixtures/results.json",
            "tests/fixtures/results.json",
            "--out",
            "Cargo.toml",
        ],
        "output folder Cargo.toml: is a file, not a folder",
    ),
    (
        &[
            "compare",
            "tests/fixtures/results.json",
            "tests/fixtures/results.json",
            "extra",
        ],
        "unexpected argument 'extra' found",
    ),
    // model
    (&["model", "--from", "src"], "--from src: Is a directory"),
    (
        &["model", "--from", "/nonexistent/sweep.jsonl"],
        "--from /nonexistent/sweep.jsonl: No such file or directory",
    ),
    (
        &["model", "--from", "/dev/null"],
        "--from /dev/null: no sweep records in 0 lines (allowed: a sweep.jsonl that `tilepipe sweep` wrote)",
    ),
    (
        &["model", "--from", "Cargo.toml"],
        "--from Cargo.toml: no sweep records in",
    ),
    (
        &["model", "--from", ""],
        "a value is required for '--from <FROM>'",
    ),
    (&["model"], "required arguments were not provided"),
    (
        &["model", "--from", "tests/fixtures/sweep.jsonl", "extra"],
        "unexpected argument 'extra' found",
    ),
    // merge
    (
        &["merge", "src", "--out", "/nonexistent/m"],
        "src: Is a directory",
    ),
    (
        &["merge", "/dev/null", "--out", "/nonexistent/m"],
        "/dev/null: empty; merge takes the sweep.jsonl files of a sweep's shards",
    ),
    (
        &["merge", "Cargo.toml", "--out", "/nonexistent/m"],
        "Cargo.toml: none of its",
    ),
    (
        &[
            "merge",
            "tests/fixtures/results.json",
            "--out",
            "/nonexistent/m",
        ],
        "(it is a run's results.json: `tilepipe report` reads it); merge takes the sweep.jsonl files",
    ),
    (
        &[
            "merge",
            "tests/fixtures/sweep.jsonl",
            "tests/fixtures/gemm-sweep-bf16.jsonl",
            "--out",
            "/nonexistent/m",
        ],
        "tests/fixtures/sweep.jsonl holds rmsnorm points and tests/fixtures/gemm-sweep-bf16.jsonl gemm points: merge joins the shards of one sweep",
    ),
    (
        &[
            "merge",
            "tests/fixtures/sweep.jsonl",
            "tests/fixtures/sweep.jsonl",
            "--out",
            "/nonexistent/m",
        ],
        "is in both tests/fixtures/sweep.jsonl and tests/fixtures/sweep.jsonl: shards must not overlap",
    ),
    (
        &["merge", "tests/fixtures/sweep.jsonl", "--out", "Cargo.toml"],
        "output folder Cargo.toml: is a file, not a folder",
    ),
    (
        &["merge", "tests/fixtures/sweep.jsonl", "--out", "/proc/x"],
        "output folder /proc/x: cannot be created",
    ),
    (
        &["merge", "tests/fixtures/sweep.jsonl", "--out", ""],
        "a value is required for '--out <OUT>'",
    ),
    (
        &[
            "merge",
            "tests/fixtures/sweep.jsonl",
            "--out",
            "/nonexistent/m",
            "--format",
            "xml",
        ],
        "[possible values: table, markdown, csv, json]",
    ),
    (&["merge", "tests/fixtures/sweep.jsonl"], "--out <OUT>"),
    // lab
    (&["lab", "nosuch"], "unrecognized subcommand 'nosuch'"),
    (
        &["lab", "queue", "--dt", "nan"],
        "'nan' is not a number (allowed: a decimal number such as 0.5)",
    ),
    (
        &["lab", "queue", "--dt", "inf"],
        "'inf' is not a number (allowed: a decimal number such as 0.5)",
    ),
    (
        &["lab", "queue", "--slots", "nan"],
        "'nan' is not a number (allowed: a decimal number such as 0.5)",
    ),
    (
        &["lab", "queue", "--slots", "inf"],
        "'inf' is not a number (allowed: a decimal number such as 0.5)",
    ),
    (
        &["lab", "queue", "--slots", "0.5"],
        "slots 0.5: allowed a whole number from 1 to 1024",
    ),
    (
        &["lab", "queue"],
        "the interactive lab needs a terminal on stdin and stdout, and there is none; allowed without one:",
    ),
    (
        &["lab", "queue", "--script", "nosuch"],
        "command 1 'nosuch': unknown command 'nosuch' (allowed: reset | arrival N | service N | step [K] | predict N | show)",
    ),
    (
        &["lab", "queue", "--script", "arrival"],
        "command 1 'arrival': arrival needs a number",
    ),
    (
        &["lab", "queue", "--script", "arrival x"],
        "command 1 'arrival x': 'x' is not a number",
    ),
    (
        &["lab", "queue", "--script", "arrival -1"],
        "command 1 'arrival -1': arrival rate -1: allowed a number from 0 to 1000000 tiles per second",
    ),
    (
        &["lab", "queue", "--script", "arrival nan"],
        "command 1 'arrival nan': arrival rate NaN: allowed a number from 0 to 1000000 tiles per second",
    ),
    (
        &["lab", "queue", "--script", "arrival inf"],
        "command 1 'arrival inf': arrival rate inf: allowed a number from 0 to 1000000 tiles per second",
    ),
    (
        &["lab", "queue", "--script", "service -1"],
        "command 1 'service -1': service rate -1: allowed a number from 0 to 1000000 tiles per second",
    ),
    (
        &["lab", "queue", "--script", "service nan"],
        "command 1 'service nan': service rate NaN: allowed a number from 0 to 1000000 tiles per second",
    ),
    (
        &["lab", "queue", "--script", "step -1"],
        "'-1' is not a step count (allowed: 0..=1000000)",
    ),
    (
        &["lab", "queue", "--script", "step x"],
        "'x' is not a step count (allowed: 0..=1000000)",
    ),
    (
        &["lab", "queue", "--script", "step 1e9"],
        "'1e9' is not a step count (allowed: 0..=1000000)",
    ),
    (
        &["lab", "queue", "--script", "step 1000001"],
        "'1000001' is not a step count (allowed: 0..=1000000)",
    ),
    (
        &["lab", "queue", "--script", "step 1.5"],
        "'1.5' is not a step count",
    ),
    (
        &["lab", "queue", "--script", "arrival 1 2"],
        "command 1 'arrival 1 2': too many words (allowed: reset | arrival N",
    ),
    (
        &["lab", "queue", "--script", "predict x"],
        "command 1 'predict x': 'x' is not a number",
    ),
    (
        &["lab", "queue", "--script", "predict nan"],
        "command 1 'predict nan': prediction NaN: allowed a backlog from 0 to 1000000000000000 tiles",
    ),
    (
        &["lab", "queue", "--script", "arrival 3; bogus"],
        "command 2 'bogus': unknown command 'bogus'",
    ),
    // nosuch
    (&["nosuch"], "unrecognized subcommand 'nosuch'"),
    // help
    (&["help", "nosuch"], "unrecognized subcommand 'nosuch'"),
    // (none)
    (&[], "Usage: tilepipe <COMMAND>"),
    (
        &["sweep", "--cache-dir", "Cargo.toml"],
        "cubin cache folder Cargo.toml: is a file, not a folder; allowed: a folder that exists or can be created, and",
    ),
    (
        &["sweep", "--devices", "x"],
        "--devices x: 'x' is not a GPU ordinal; allowed: all, or ordinals like 0,1",
    ),
    (
        &["sweep", "--devices", "-1"],
        "--devices -1: '-1' is not a GPU ordinal",
    ),
    (
        &["sweep", "--devices", "0,0"],
        "--devices 0,0: GPU 0 is named twice (two timed kernels would share it)",
    ),
    (
        &["sweep", "--devices", "0,"],
        "--devices 0,: '' is not a GPU ordinal",
    ),
    (
        &["sweep", "--devices", "ALL"],
        "--devices ALL: 'ALL' is not a GPU ordinal",
    ),
    (
        &["sweep", "--devices", "all,0"],
        "'all' is not a GPU ordinal",
    ),
    // found after the first battery, refused now before any file is touched
    (&["run", "--timeline", ""], "an empty list of variants"),
    (&["check", "--sanitize-variants", "sync"], "--sanitize"),
    (&["check", "--sanitize", "racecheck,"], "has an empty entry"),
    (&["run", "--variants", "sync,"], "has an empty entry"),
    (&["sweep", "--axis", "stages=1,,2"], "has an empty entry"),
    (&["sweep", "--axis", "tiles=4,4"], "'4' is given twice"),
    (
        &["sweep", "--axis", "dtype=f32,f32"],
        "'f32' is given twice",
    ),
    (
        &["sweep", "--axis", "dtype=f32", "--dtype", "f16"],
        "both set the precision",
    ),
    (
        &["sweep", "--devices", "0", "--device", "1"],
        "cannot be used with",
    ),
    (
        &["check", "--dtypes", "f32,f32"],
        "the suite group f32 h4096 is named twice",
    ),
    (&["check", "--suite-hidden", "4096,4096"], "is named twice"),
    (
        &["check", "--workload", "gemm", "--layouts", "kn,kn"],
        "the suite group f32 kn is named twice (--dtypes f32,f16,bf16, --layouts kn,kn): allowed: each precision and",
    ),
    (&["sass", "nosuch"], "no variant matches 'nosuch'"),
    (
        &["sass", "cpasync", "--arch", "sm_90"],
        "'cpasync' names no one variant",
    ),
    (
        &["sass", "sync", "--listing", "/proc/x"],
        "--listing /proc/x: its folder /proc",
    ),
    (
        &["sass", "sync", "--listing", "src"],
        "--listing src: is a folder",
    ),
    (
        &["sass", "sync", "--cache-dir", "Cargo.toml"],
        "cubin cache folder Cargo.toml: is a file",
    ),
    (
        &["run", "--device", "-1"],
        "'-1' is not allowed (allowed: a whole number from 0 to 1023)",
    ),
    (
        &["run", "--device", "x"],
        "allowed: a whole number from 0 to 1023",
    ),
    (
        &["check", "--seed", "x"],
        "'x' is not a seed (allowed: a whole number from 0 to",
    ),
    (&["check", "--seed", "-1"], "'-1' is not a seed"),
    (
        &["probe", "sync", "--stress", "x"],
        "'x' is not allowed (allowed: a whole number from 0 to 3)",
    ),
    (
        &["probe", "sync", "--blocks", "0"],
        "allowed: a whole number from 1 to 65536",
    ),
    (
        &["timeline", "--blocks", "x"],
        "allowed: a whole number from 1 to 256",
    ),
    (
        &["timeline", "--tiles", "x"],
        "allowed: a whole number from 1 to 1024",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--block-size",
            "x",
        ],
        "allowed: a whole number from 1 to 1024",
    ),
    (
        &[
            "inspect",
            "tests/fixtures/inspect/cpasync.sm_80.cubin",
            "--block-size",
            "1024",
            "--dynamic-smem",
            "4294967295",
        ],
        "allowed: a whole number from 0 to 262144",
    ),
    (
        &["lab", "queue", "--dt", "x"],
        "'x' is not a number (allowed: a decimal number",
    ),
    (&["lab", "queue", "--slots", "x"], "'x' is not a number"),
    (
        &["lab", "queue", "--slots", "1.5", "--script", "show"],
        "slots 1.5: allowed a whole number from 1 to 1024",
    ),
    (
        &["lab", "queue", "--slots", "1e308", "--script", "show"],
        "allowed a whole number from 1 to 1024",
    ),
    (
        &["lab", "queue", "--dt", "1e308", "--script", "show"],
        "allowed a number of seconds from 0.001 to 60",
    ),
    (
        &["lab", "queue", "--script", "arrival 1e308; step 1000"],
        "allowed a number from 0 to 1000000 tiles per second",
    ),
    (
        &["lab", "queue", "--script", "service 1e308"],
        "tiles per second",
    ),
    (
        &["lab", "queue", "--script", "reset 5"],
        "reset takes no number",
    ),
    (
        &["lab", "queue", "--script", "show extra"],
        "show takes no number",
    ),
    (
        &["lab", "queue", "--script", "predict -1"],
        "allowed a backlog from 0",
    ),
    (&["lab", "queue", "--script", ""], "holds no command"),
    (&["lab", "queue", "--script", ";;;"], "holds no command"),
    (
        &["lab", "queue", "--script", "show", "--stdin"],
        "cannot be used with",
    ),
    (
        &["report", "Cargo.toml"],
        "Cargo.toml: not JSON (expected value at line 1",
    ),
    (
        &["sweep", "--shard", "-1/2"],
        "--shard -1/2: allowed: I/N with 0 <= I < N <= 65536",
    ),
    (
        &["sweep", "--shard", "-0/-2"],
        "--shard -0/-2: allowed: I/N",
    ),
    (
        &["compare", "tests/fixtures/results.json", "Cargo.toml"],
        "NEW Cargo.toml: not JSON",
    ),
];

/// (a refused command line, the same with the right input): the second gets past every judgement,
/// so the refusal was of that input alone. Without a GPU, past every judgement is exit 0 for a
/// host-only command and the no-GPU message (exit 1) for one that would open the GPU next.
const MENDED: &[(&[&str], &[&str])] = &[
    (
        &["run", "--workload", "attention", "--head-dim", "96"],
        &["run", "--workload", "attention", "--head-dim", "64"],
    ),
    (
        &["check", "--workload", "attention", "--head-dims", "64,96"],
        &["check", "--workload", "attention", "--head-dims", "64,128"],
    ),
    (&["run", "--warmup", "-1"], &["run", "--warmup", "1"]),
    (&["run", "--repeats", "0"], &["run", "--repeats", "5"]),
    (&["run", "--tokens", "-5"], &["run", "--tokens", "5"]),
    (
        &["run", "--row-stride", "4095"],
        &["run", "--row-stride", "4096"],
    ),
    (
        &["run", "--out-row-stride", "4095"],
        &[
            "run",
            "--out-row-stride",
            "4099",
            "--out-offset",
            "3",
            "--offset",
            "1",
        ],
    ),
    (
        &["run", "--variants", "nosuch"],
        &["run", "--variants", "sync"],
    ),
    (
        &["run", "--variants", "sync,"],
        &["run", "--variants", "sync,tma-s2"],
    ),
    (&["run", "--timeline", ""], &["run", "--timeline"]),
    (&["run", "--device", "-1"], &["run", "--device", "0"]),
    (
        &["run", "--workload", "gemm", "--tokens", "5"],
        &["run", "--workload", "gemm", "--m", "5"],
    ),
    (
        &["run", "--cache-dir", "Cargo.toml"],
        &["run", "--no-cache"],
    ),
    (
        &["check", "--dtypes", "f32,f32"],
        &["check", "--dtypes", "f32"],
    ),
    (&["check", "--seed", "x"], &["check", "--seed", "7"]),
    (
        &["check", "--sanitize-variants", "sync"],
        &[
            "check",
            "--sanitize",
            "racecheck",
            "--sanitize-variants",
            "sync",
        ],
    ),
    (
        &["check", "--workload", "gemm", "--layouts", "kn,kn"],
        &["check", "--workload", "gemm", "--layouts", "kn,nk"],
    ),
    (
        &["sweep", "--axis", "tiles=4,4"],
        &["sweep", "--axis", "tiles=4,8", "--out", "TMP"],
    ),
    (
        &["sweep", "--axis", "dtype=f32", "--dtype", "f16"],
        &["sweep", "--axis", "dtype=f32,f16", "--out", "TMP"],
    ),
    (&["probe", "cpasync"], &["probe", "cpasync-cg16-s2"]),
    (
        &["sweep", "--shard", "-1/2"],
        &["sweep", "--shard", "1/2", "--out", "TMP"],
    ),
    (
        &["probe", "sync", "--stress", "4"],
        &["probe", "sync", "--stress", "3"],
    ),
    (
        &["timeline", "--blocks", "0"],
        &["timeline", "--blocks", "2"],
    ),
    (
        &["sass", "cpasync", "--arch", "sm_90"],
        &["sass", "cpasync-cg16-s2"],
    ),
    (
        &["sass", "sync", "--listing", "src"],
        &["sass", "sync", "--listing", "TMP/sync.sass"],
    ),
    (
        &["report", "Cargo.toml"],
        &["report", "tests/fixtures/results.json"],
    ),
    (
        &[
            "report",
            "tests/fixtures/results.json",
            "--out",
            "Cargo.toml/x.html",
        ],
        &[
            "report",
            "tests/fixtures/results.json",
            "--out",
            "TMP/r.html",
        ],
    ),
    (
        &[
            "compare",
            "tests/fixtures/results.json",
            "tests/fixtures/gemm-h200.json",
        ],
        &[
            "compare",
            "tests/fixtures/results.json",
            "tests/fixtures/results.json",
        ],
    ),
    (
        &["model", "--from", "Cargo.toml"],
        &["model", "--from", "tests/fixtures/sweep.jsonl"],
    ),
    (
        &["merge", "Cargo.toml", "--out", "/nonexistent/m"],
        &["merge", "tests/fixtures/sweep.jsonl", "--out", "TMP"],
    ),
    (
        &["lab", "queue", "--slots", "1.5", "--script", "show"],
        &["lab", "queue", "--slots", "2", "--script", "show"],
    ),
    (
        &["lab", "queue", "--script", "arrival 1e308; step 1000"],
        &["lab", "queue", "--script", "arrival 3; step 1000"],
    ),
    (
        &["lab", "queue", "--script", "reset 5"],
        &["lab", "queue", "--script", "reset"],
    ),
    (
        &["lab", "queue", "--script", ""],
        &["lab", "queue", "--script", "show"],
    ),
];

fn tilepipe(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("tilepipe")
        .unwrap()
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap()
}

/// Every file name at the top of the repository and every fixture's bytes: what a refusal must
/// leave as it was (a refused sweep once left an empty `sweep/` folder behind).
fn tree_state() -> (Vec<String>, Vec<(String, Vec<u8>)>) {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut top: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    let mut fixtures = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(root).join("tests/fixtures")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                fixtures.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    fixtures.sort();
    (top, fixtures)
}

#[test]
fn every_bad_input_of_the_battery_is_refused_before_the_gpu_with_what_is_allowed() {
    let before = tree_state();
    let mut wrong = Vec::new();
    for &(args, needle) in BATTERY {
        let out = tilepipe(args);
        let err = String::from_utf8_lossy(&out.stderr);
        let judged = out.status.code() == Some(2)
            && err.contains(needle)
            && !err.contains("no CUDA")
            && !err.contains("panicked");
        if !judged {
            wrong.push(format!("{args:?} -> {:?}: {err}", out.status.code()));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {}:\n{}",
        wrong.len(),
        BATTERY.len(),
        wrong.join("\n")
    );
    assert!(BATTERY.len() >= 200, "{} inputs", BATTERY.len());
    assert!(
        tree_state() == before,
        "a refused command changed a fixture or left a file at the top of the repository"
    );
}

#[test]
fn each_mended_input_gets_past_every_judgement() {
    let tmp = tempfile::tempdir().unwrap();
    let mut wrong = Vec::new();
    for &(bad, good) in MENDED {
        assert!(
            BATTERY.iter().any(|(b, _)| *b == bad),
            "{bad:?} is not in the battery"
        );
        let dir = tmp
            .path()
            .join(wrong.len().to_string() + &good.len().to_string());
        let good: Vec<String> = good
            .iter()
            .map(|a| a.replace("TMP", &dir.display().to_string()))
            .collect();
        let args: Vec<&str> = good.iter().map(String::as_str).collect();
        let out = tilepipe(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        let past = match out.status.code() {
            Some(0) => true,
            Some(1) => err.contains("no CUDA driver"),
            _ => false,
        };
        if !past || err.contains("panicked") {
            wrong.push(format!("{good:?} -> {:?}: {err}", out.status.code()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The cache folder named by TILEPIPE_CACHE_DIR is judged as the flag's is.
#[test]
fn a_cache_folder_from_the_environment_is_judged_before_the_gpu() {
    for (dir, says) in [
        (
            "Cargo.toml",
            "cubin cache folder Cargo.toml: is a file, not a folder",
        ),
        (
            "/proc/version",
            "cubin cache folder /proc/version: is a file",
        ),
    ] {
        let out = Command::cargo_bin("tilepipe")
            .unwrap()
            .args(["run"])
            .env("CUDA_VISIBLE_DEVICES", "")
            .env("TILEPIPE_CACHE_DIR", dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{dir}: {err}");
        assert!(
            err.contains(says) && !err.contains("no CUDA"),
            "{dir}: {err}"
        );
    }
    // --no-cache stores nothing, so the variable is not consulted
    let out = Command::cargo_bin("tilepipe")
        .unwrap()
        .args(["run", "--no-cache"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .env("TILEPIPE_CACHE_DIR", "Cargo.toml")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no CUDA driver"));
}

/// The names a refusal allows are each given once, though every precision and layout of a
/// suite has them all.
#[test]
fn an_unknown_variant_is_refused_with_each_allowed_name_once() {
    let out = tilepipe(&["check", "--workload", "gemm", "--variants", "zzz"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let (_, allowed) = err.split_once("prefix of ").expect("the allowed names");
    let names: Vec<&str> = allowed.trim_end_matches([')', '\n']).split(", ").collect();
    for n in ["sync", "tma-wgmma-s2", "ctl-skip-wait", "ctl-tma-wrong-box"] {
        assert_eq!(names.iter().filter(|x| **x == n).count(), 1, "{n}: {err}");
    }
}
