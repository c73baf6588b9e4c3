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
    (&["timeline", "--blocks", "0"], "0 is not in 1..=256"),
    (&["timeline", "--blocks", "-2"], "-2 is not in 1..=256"),
    (&["timeline", "--tiles", "0"], "0 is not in 1..=1024"),
    (
        &["sass", "sync", "--arch", "sm_90", "--context", "-1"],
        "from 0 to 1000",
    ),
    (
        &["lab", "queue", "--slots", "0"],
        "allowed a finite number >= 1",
    ),
    (
        &["lab", "queue", "--slots", "-2"],
        "allowed a finite number >= 1",
    ),
    (
        &["lab", "queue", "--dt", "0"],
        "allowed a finite number > 0",
    ),
    (
        &["lab", "queue", "--dt", "-1"],
        "allowed a finite number > 0",
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
        "no workload 'nosuch' (allowed: rmsnorm, copy, gemm)",
    ),
    (
        &["run", "--workload", "gemm", "--layout", "xy"],
        "[possible values: kn, nk]",
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
];

#[test]
fn every_bad_input_of_the_battery_is_refused_before_the_gpu_with_what_is_allowed() {
    let mut wrong = Vec::new();
    for &(args, needle) in BATTERY {
        let out = Command::cargo_bin("tilepipe")
            .unwrap()
            .args(args)
            .env("CUDA_VISIBLE_DEVICES", "")
            .output()
            .unwrap();
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
}

/// The names a refusal allows are each given once, though every precision and layout of a
/// suite has them all.
#[test]
fn an_unknown_variant_is_refused_with_each_allowed_name_once() {
    let out = Command::cargo_bin("tilepipe")
        .unwrap()
        .args(["check", "--workload", "gemm", "--variants", "zzz"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let (_, allowed) = err.split_once("prefix of ").expect("the allowed names");
    let names: Vec<&str> = allowed.trim_end_matches([')', '\n']).split(", ").collect();
    for n in ["sync", "tma-wgmma-s2", "ctl-skip-wait", "ctl-tma-wrong-box"] {
        assert_eq!(names.iter().filter(|x| **x == n).count(), 1, "{n}: {err}");
    }
}
