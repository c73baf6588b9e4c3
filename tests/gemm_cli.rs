//! The GEMM's arguments through the real binary: every refusal comes before the GPU opens, in one
//! line that says what was wrong and what is allowed, with exit code 2.

use assert_cmd::Command;

fn refused(args: &[&str]) -> String {
    let out = Command::cargo_bin("tilepipe")
        .unwrap()
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.contains("allowed") || err.contains("possible values"),
        "{args:?}: {err}"
    );
    assert!(
        !err.contains("no CUDA") && !err.contains("panicked"),
        "{args:?}: {err}"
    );
    err
}

#[test]
fn gemm_arguments_are_judged_before_the_gpu_opens() {
    for (args, needle) in [
        (
            vec!["run", "--workload", "gemm", "--m", "0"],
            "M = 0: allowed 1..=1048576",
        ),
        (
            vec!["run", "--workload", "gemm", "--k", "2000000"],
            "K = 2000000: allowed 1..=1048576",
        ),
        (
            vec![
                "run",
                "--workload",
                "gemm",
                "--m",
                "1048576",
                "--n",
                "1048576",
            ],
            "the problem's host buffers:",
        ),
        (
            vec!["run", "--workload", "gemm", "--variants", "nosuch"],
            "no variant matches 'nosuch' (allowed: a name or prefix of sync, regprefetch, cpasync-cg16-s2",
        ),
        (
            vec!["run", "--workload", "gemm", "--layout", "tn"],
            "[possible values: kn, nk]",
        ),
        (
            vec!["run", "--workload", "nosuch"],
            "no workload 'nosuch' (allowed: rmsnorm, copy, gemm, attention)",
        ),
        (
            vec!["sweep", "--workload", "gemm", "--axis", "k=64,0"],
            "axis k: '0' is not allowed (allowed: whole numbers from 1",
        ),
        (
            vec!["sweep", "--workload", "gemm", "--axis", "tiles=4"],
            "unknown axis 'tiles' for --workload gemm (allowed: mechanism, stages, k, dtype)",
        ),
        (
            vec!["sweep", "--workload", "gemm", "--n", "0"],
            "N = 0: allowed",
        ),
        (
            vec!["check", "--workload", "gemm", "--layouts", "kn,xx"],
            "--layouts: 'xx' is not a layout of B (allowed: kn, nk)",
        ),
        (
            vec!["check", "--workload", "gemm", "--suite-hidden", "4096"],
            "--suite-hidden not taken by --workload gemm (allowed: --layouts)",
        ),
        (
            vec!["check", "--layouts", "kn"],
            "--layouts not taken by --workload rmsnorm (allowed: --suite-hidden)",
        ),
        (
            vec!["probe", "cpasync", "--workload", "gemm"],
            "'cpasync' names no one variant: the full name is needed",
        ),
    ] {
        let err = refused(&args);
        assert!(err.contains(needle), "{args:?}: wanted {needle:?} in {err}");
    }
}

#[test]
fn a_flag_of_another_workload_is_refused_by_name() {
    for (args, needle) in [
        (
            vec!["run", "--workload", "gemm", "--tokens", "5"],
            "--tokens not taken by --workload gemm (allowed: --dtype, --m, --n, --k, --layout)",
        ),
        (
            vec![
                "timeline",
                "--workload",
                "gemm",
                "--row-stride",
                "5000",
                "--offset",
                "8",
            ],
            "--row-stride, --offset not taken by --workload gemm",
        ),
        (
            vec!["run", "--m", "5"],
            "--m not taken by --workload rmsnorm (allowed: --dtype, --tokens, --hidden, --row-stride, --offset, --alloc, --out-row-stride, --out-offset, --tile-rows)",
        ),
        (
            vec!["probe", "sync", "--workload", "copy", "--layout", "nk"],
            "--layout not taken by --workload copy",
        ),
    ] {
        let err = refused(&args);
        assert!(err.contains(needle), "{args:?}: wanted {needle:?} in {err}");
    }
}

#[test]
fn a_gemm_timeline_refuses_an_empty_dimension_before_the_gpu() {
    let err = refused(&["timeline", "--workload", "gemm", "--m", "0"]);
    assert!(err.contains("M = 0") && err.contains("allowed"), "{err}");
}

#[test]
fn report_renders_a_recorded_gemm_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("tilepipe")
        .unwrap()
        .args(["report", "tests/fixtures/gemm-h200.json", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("gemm 8192x8192x8192 bf16 B[NxK]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("cuBLAS 13.1.0") && stdout.contains("cpasync-cg16-s3"),
        "{stdout}"
    );
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(page.contains("TFLOP/s per variant"));
    assert!(
        !stdout.contains("gemm ladder") && !page.contains("gemm ladder"),
        "no Hopper variant in this run, no ladder"
    );
}

#[test]
fn a_recorded_hopper_run_shows_each_step_of_the_ladder() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("tilepipe")
        .unwrap()
        .args(["report", "tests/fixtures/gemm-h200-hopper.json", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    let ladder = stdout.split_once("the gemm ladder").expect("a ladder").1;
    for (variant, gain) in [
        ("tma-wgmma-s2", "-"),
        ("tma-wgmma-ws-s4", "1.24x"),
        ("tma-wgmma-ws-persist-s4", "1.00x"),
    ] {
        let line = ladder
            .lines()
            .find(|l| l.contains(&format!(" {variant} ")))
            .unwrap();
        assert!(
            line.trim_end_matches('│').trim_end().ends_with(gain),
            "{line}"
        );
    }
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(page.contains("The gemm ladder") && page.contains("1.24x"));
}

#[test]
fn compare_takes_two_gemm_runs_or_refuses_a_mixed_pair() {
    let gemm = "tests/fixtures/gemm-h200-hopper.json";
    let out = Command::cargo_bin("tilepipe")
        .unwrap()
        .args(["compare", gemm, gemm])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("cuBLAS 13.1.0 687.5 TFLOP/s") && text.contains("tma-wgmma-ws-s4"),
        "{text}"
    );
    let out = Command::cargo_bin("tilepipe")
        .unwrap()
        .args(["compare", "tests/fixtures/seam-before.json", gemm])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("BASE is a rmsnorm run and NEW a gemm run") && err.contains("allowed"),
        "{err}"
    );
}
