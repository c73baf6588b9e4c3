//! The real binary on recorded evidence: `inspect` on a saved cubin, `compare` on two recorded
//! runs, a recorded sweep split into shards and merged back, and `sweep --devices` refused before
//! any worker starts.

#[path = "common/bin.rs"]
mod bin;

use bin::{assert_says, fixture, refuses, stderr_of, tilepipe};

/// Exit 1 when a claim is contradicted, 0 when every claim holds, 2 when nothing could be
/// judged. Needs nvdisasm and cuobjdump (no NVRTC: the cubin is saved); ignored without them at
/// build time, unless TILEPIPE_REQUIRE_NVRTC is set.
#[test]
#[cfg_attr(
    not(disassemblers_found),
    ignore = "nvdisasm or cuobjdump not found at build time; .ci/run installs them"
)]
fn inspect_a_cubin_with_json_and_a_false_claim() {
    let tc = tilepipe::toolchain::Toolchain::discover();
    assert!(
        tc.nvdisasm.is_some() && tc.cuobjdump.is_some(),
        "nvdisasm and cuobjdump, found at build time (or TILEPIPE_REQUIRE_NVRTC is set), are missing now"
    );
    let cubin = fixture("inspect/cpasync.sm_80.cubin");
    let inspect = |args: &[&str]| {
        tilepipe()
            .args(["inspect", &cubin])
            .args(args)
            .output()
            .unwrap()
    };
    let out = inspect(&[
        "--kernel",
        "copy_cpasync16",
        "--claim",
        "tma",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let k = &json["kernels"][0];
    assert_eq!(k["name"], "copy_cpasync16");
    assert_eq!(k["claims"][0]["outcome"], "contradicted");
    assert_eq!(k["claims"][0]["claim"]["mechanism"], "tma");
    assert!(
        k["claims"][0]["emitted"]
            .as_str()
            .unwrap()
            .contains("LDGSTS.E.BYPASS.128")
    );
    assert_eq!(k["checks"][1]["status"], "holds");
    let out = inspect(&[
        "--kernel",
        "copy_cpasync16",
        "--claim",
        "cpasync16",
        "--block-size",
        "256",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("claim (--claim): attested: cp.async 16 B"),
        "{text}"
    );
    assert!(text.contains("blocks/SM"), "{text}");
    // a protocol hazard alone fails too
    let out = inspect(&["--kernel", "cpasync_no_wait", "--claim", "cpasync16"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("check cp.async commit/wait: HAZARD"));
    for (args, needle) in [
        (vec!["--kernel", "nope"], "no kernel matching 'nope'"),
        (vec!["--arch", "sm_90"], "is a cubin for sm_80, not sm_90"),
        (vec!["--claim", "fast"], "unknown claim 'fast'"),
        (vec!["--dynamic-smem", "1024"], "--block-size"),
    ] {
        let out = inspect(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_says(&out, needle);
    }
    refuses(
        &["inspect", &fixture("sweep.jsonl")],
        "not a CUDA source, cubin, fatbinary",
    );
}

#[test]
fn compare_exits_by_the_threshold_on_two_recorded_runs() {
    let (base, new) = (fixture("seam-before.json"), fixture("seam-after.json"));
    // the slowest regression of the pair is tma-ws-s3-64k at 1.125
    for (threshold, code, regressed) in [
        ("50", 0, ""),
        ("13", 0, ""),
        ("12", 1, "1 regressed: tma-ws-s3-64k"),
        ("5", 1, "4 regressed: "),
    ] {
        let out = tilepipe()
            .args([
                "compare",
                &base,
                &new,
                "--format",
                "markdown",
                "--threshold",
            ])
            .arg(threshold)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "threshold {threshold}");
        let text = String::from_utf8(out.stdout).unwrap();
        let first = text.lines().next().unwrap();
        assert!(
            first.starts_with("**14 same, 2 faster, 6 slower (threshold "),
            "{first}"
        );
        assert_eq!(first.contains("regressed"), code == 1, "{first}");
        assert!(first.contains(regressed), "{first}");
        assert!(text.contains("| tma-ws-s3-64k |"));
    }
    let out = tilepipe()
        .args(["compare", &base, &new, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "the default threshold is 5%");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["variants"].as_array().unwrap().len(), 22);
}

#[test]
fn compare_refuses_another_problem_or_gpu_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let base = fixture("seam-before.json");
    let mut other: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("seam-after.json")).unwrap())
            .unwrap();
    other["device"]["name"] = "NVIDIA H100 80GB HBM3".into();
    let p = other["workload"]["problem"]
        .as_str()
        .unwrap()
        .replace("x 4096", "x 1544");
    other["workload"]["problem"] = p.into();
    let new = dir.path().join("other.json");
    std::fs::write(&new, other.to_string()).unwrap();
    let refused = tilepipe()
        .args(["compare", &base])
        .arg(&new)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert_says(&refused, "no common ground");
    assert_says(&refused, "different GPUs");
    assert_says(&refused, "different problems");
    let forced = tilepipe()
        .args(["compare", &base])
        .arg(&new)
        .args(["--force", "--threshold", "50"])
        .output()
        .unwrap();
    assert_eq!(forced.status.code(), Some(0));
    let text = String::from_utf8(forced.stdout).unwrap();
    assert!(text.contains("warning: different GPUs"), "{text}");
    assert!(
        text.contains(&format!("NEW: {}: tilepipe ", new.display())),
        "{text}"
    );
}

#[test]
fn compare_refuses_bad_input_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing.json");
    let not_results = dir.path().join("results.json");
    std::fs::write(&not_results, "{\"schema_version\": 2}").unwrap();
    let base = fixture("seam-before.json");
    for (args, needle) in [
        (
            vec![base.clone(), missing.display().to_string()],
            "NEW ".to_string() + &missing.display().to_string(),
        ),
        (
            vec![not_results.display().to_string(), base.clone()],
            "missing field".to_string(),
        ),
        (
            vec![base.clone(), base.clone(), "--threshold=-1".into()],
            "not a percentage".to_string(),
        ),
    ] {
        let out = tilepipe().arg("compare").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr_of(&out);
        assert!(err.contains(&needle), "{args:?}: {err}");
    }
}

#[test]
fn shards_of_a_recorded_sweep_merge_back_into_the_same_points() {
    use tilepipe::commands::sweep::SweepSpec;
    use tilepipe::commands::sweep::shard::{SHARD_SPEC, Shard, ShardSpec};
    use tilepipe::workload::{rmsnorm::RmsNorm, rows::Rows};
    let lines: Vec<String> = std::fs::read_to_string(fixture("sweep.jsonl"))
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let key = |l: &str| {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        v["key"].as_str().unwrap().to_string()
    };
    let root = tempfile::tempdir().unwrap();
    let count = 3;
    let mut inputs = Vec::new();
    for index in 0..count {
        let shard = Shard { index, count };
        let dir = root.path().join(format!("shard{index}"));
        std::fs::create_dir_all(&dir).unwrap();
        let spec = ShardSpec {
            workload: "rmsnorm".into(),
            spec: SweepSpec::default_for(&Rows(&RmsNorm)),
            problem: "bf16 h4096".into(),
            seed: 1,
            shard,
        };
        std::fs::write(dir.join(SHARD_SPEC), serde_json::to_string(&spec).unwrap()).unwrap();
        let mine: Vec<&String> = lines.iter().filter(|l| shard.owns(&key(l))).collect();
        let text: String = mine.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(dir.join("sweep.jsonl"), text).unwrap();
        inputs.push(dir.join("sweep.jsonl"));
    }
    let out = root.path().join("all");
    let run = tilepipe()
        .arg("merge")
        .args(&inputs)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr_of(&run));
    let merged = std::fs::read_to_string(out.join("sweep.jsonl")).unwrap();
    let mut got: Vec<String> = merged.lines().map(key).collect();
    let mut want: Vec<String> = lines.iter().map(|l| key(l)).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    assert!(out.join("bandwidth.svg").is_file());

    // the same shard twice overlaps: refused, exit 2, naming a point
    let again = tilepipe()
        .arg("merge")
        .args([&inputs[0], &inputs[0]])
        .arg("--out")
        .arg(root.path().join("twice"))
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert_says(&again, "is in both");

    // an input that is no sweep's leaves the merged folder as it was: exit 2, nothing rewritten
    let before = std::fs::read(out.join("sweep.jsonl")).unwrap();
    let results = std::path::PathBuf::from(fixture("h200-run.json"));
    let empty = root.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    for (bad, says) in [(&results, "`tilepipe report` reads it"), (&empty, "empty")] {
        let refused = tilepipe()
            .arg("merge")
            .args([&inputs[0], bad])
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(refused.status.code(), Some(2));
        assert_says(&refused, says);
        assert_eq!(std::fs::read(out.join("sweep.jsonl")).unwrap(), before);
    }
}

#[test]
fn sweep_devices_are_checked_before_any_worker_starts() {
    let dir = tempfile::tempdir().unwrap();
    for (list, needle) in [
        ("0,0", "GPU 0 is named twice"),
        (
            "0,x",
            "'x' is not a GPU ordinal; allowed: all, or ordinals like 0,1",
        ),
    ] {
        let out = tilepipe()
            .args(["sweep", "--devices", list, "--out"])
            .arg(dir.path().join(list))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{list}");
        assert!(stderr_of(&out).contains(needle), "{}", stderr_of(&out));
    }
}

/// A recorded run's tables: by default the GPU named first and every table within 160 columns
/// (long cells wrapped, never cut); `--wide` keeps every column, the host submission time too.
#[test]
fn report_tables_fit_160_columns_unless_wide() {
    for run in ["results.json", "gemm-h200.json", "h200-peers.json"] {
        let table = |wide: bool| {
            let mut cmd = tilepipe();
            cmd.args(["report", &fixture(run)]);
            if wide {
                cmd.arg("--wide");
            }
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{run}: {out:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        let compact = table(false);
        assert!(
            compact.starts_with("NVIDIA H200 (sm_90"),
            "{run}: {compact}"
        );
        let widest = |t: &str| t.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        let rows = |t: &str| {
            t.lines()
                .filter(|l| l.starts_with('│'))
                .map(|l| l.chars().count())
                .max()
                .unwrap_or(0)
        };
        assert!(rows(&compact) <= 160, "{run}: {} columns", rows(&compact));
        assert!(!compact.contains("host submit us"), "{run}");
        let wide = table(true);
        assert!(
            wide.contains("host submit us") && wide.contains("completion"),
            "{run}"
        );
        assert!(widest(&wide) > 160, "{run}");
        // every variant is in both
        for line in wide
            .lines()
            .filter(|l| l.starts_with("│ ") && l.contains("passed"))
        {
            let name = line.trim_start_matches("│ ").split(' ').next().unwrap();
            assert!(compact.contains(name), "{run}: {name}");
        }
    }
}
