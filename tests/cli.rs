//! The real binary on fixtures: errors are one clear line with a non-zero exit; the host-only
//! commands (lab, report, model) work without a GPU. (`cli_recorded.rs`: the commands that read
//! recorded runs, cubins and sweeps.)

#[path = "common/bin.rs"]
mod bin;
#[path = "../build/commit.rs"]
mod commit;

use bin::{assert_says, fixture, refuses, stderr_of, tilepipe};
use std::path::Path;

#[test]
fn run_without_a_usable_gpu_is_one_clear_line() {
    // no devices visible: the same outcome on machines with and without a driver
    let out = tilepipe()
        .args(["run", "--quiet"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr_of(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].starts_with("tilepipe: error: "), "{err}");
    assert!(err.contains("driver") || err.contains("GPU"), "{err}");
    assert!(!err.contains("panicked"));
}

#[test]
fn bad_shapes_are_refused_before_any_gpu_work() {
    for (args, needle) in [
        (vec!["--hidden", "100"], "multiple of 8"),
        (vec!["--tokens", "0"], "at least 1"),
        (
            vec!["--hidden", "64", "--row-stride", "32"],
            "smaller than hidden",
        ),
        (
            vec![
                "--tokens", "4", "--hidden", "64", "--offset", "1000", "--alloc", "1024",
            ],
            "allocation holds 1024",
        ),
    ] {
        let out = tilepipe().arg("run").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr_of(&out);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let out = tilepipe()
        .args(["run", "--dtype", "int8"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr_of(&out).contains("allowed: f32, f16, bf16"));
}

#[test]
fn queue_lab_exercises_through_the_binary() {
    let out = tilepipe()
        .args([
            "lab",
            "queue",
            "--script",
            "reset; arrival 3; service 2; step; step; show",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("cannot validate a CUDA pipeline")
    );
    assert_eq!(text.lines().last().unwrap(), "backlog 5");
    let out = tilepipe()
        .args(["lab", "queue", "--stdin"])
        .write_stdin("reset\narrival 3\nservice 4\nstep\nstep\n")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
        "backlog 3"
    );
    refuses(
        &["lab", "queue", "--script", "reset; warp 9"],
        "unknown command 'warp'",
    );
}

#[test]
fn report_renders_an_h200_results_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = tilepipe()
        .args(["report", &fixture("results.json"), "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("cpasync-cg16-s2") && text.contains("LDGSTS.E.BYPASS.128"));
    assert!(
        text.contains("timeline sync: 0.0%"),
        "the sequential variant shows no overlap"
    );
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("tma-ws-s3") && html.contains("NVIDIA H200"));
}

#[test]
fn report_refuses_other_files_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("results.json");
    std::fs::write(&bad, "{\"schema_version\": 2}").unwrap();
    let out = tilepipe().arg("report").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "bad input");
    assert_says(&out, "missing field");
    // a file of another schema says which
    std::fs::write(&bad, "{\"schema_version\": 1}").unwrap();
    let out = tilepipe().arg("report").arg(&bad).output().unwrap();
    assert_says(&out, "schema_version 1 (this tilepipe reads 2)");
}

#[test]
fn model_reads_an_h200_sweep() {
    let out = tilepipe()
        .args(["model", "--from", &fixture("sweep.jsonl")])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("predicted") && text.contains("cpasync-cg16-s2"));
    assert!(
        text.contains("FLAGGED"),
        "some departures exceed 15% on the H200"
    );
}

#[test]
fn sweep_axes_are_checked_before_the_gpu() {
    refuses(
        &["sweep", "--axis", "stages=9"],
        "stages: '9' is not allowed (allowed: 1..8",
    );
}

#[test]
fn a_refused_dtype_axis_lists_the_dtypes() {
    let out = tilepipe()
        .args(["sweep", "--axis", "dtype=fp8"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_of(&out);
    assert_eq!(
        err.trim_end(),
        "tilepipe: error: invalid argument: axis dtype: 'fp8' is not allowed (allowed: f32, f16, bf16)"
    );
}

#[test]
fn report_out_ending_in_html_is_the_file_written() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("x.html");
    std::fs::write(&html, "an older report").unwrap();
    let out = tilepipe()
        .args(["report", &fixture("results.json"), "--out"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(html.is_file());
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("<svg") && text.contains("NVIDIA H200"));
    // nothing else beside it: no folder, no temporary file left behind
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1);
    assert!(stderr_of(&out).contains("x.html"));
}

#[test]
fn an_os_error_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = tilepipe().arg("report").arg(dir.path()).output().unwrap();
    assert!(!out.status.success());
    let err = stderr_of(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.matches("(os error 21)").count(), 1, "{err}");
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
}

#[test]
fn model_says_a_missing_file_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("sweep.jsonl");
    let out = tilepipe()
        .arg("model")
        .arg("--from")
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "bad input");
    let err = stderr_of(&out);
    assert!(
        err.starts_with("tilepipe: error: invalid argument: --from ")
            && err.contains(&missing.display().to_string()),
        "{err}"
    );
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(!err.contains("no sweep records"), "{err}");
}

#[test]
fn model_names_each_line_it_skips() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("sweep.jsonl");
    let mut text = std::fs::read_to_string(fixture("sweep.jsonl")).unwrap();
    let good = text.lines().count();
    text.push_str("not json\n{\"key\": \"cut");
    std::fs::write(&p, text).unwrap();
    let out = tilepipe()
        .arg("model")
        .arg("--from")
        .arg(&p)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains(&format!("line {}: not a sweep record (", good + 1)),
        "{err}"
    );
    assert!(
        err.contains(&format!("line {}: torn last line (12 bytes", good + 2)),
        "{err}"
    );
    assert!(
        err.contains(&format!("skipped 2 of {} lines", good + 2)),
        "{err}"
    );
    assert!(String::from_utf8(out.stdout).unwrap().contains("predicted"));
}

/// Runs tilepipe with no GPU visible: a check that happens after the GPU opens says "no CUDA
/// driver" or "no CUDA GPU" instead of its own message.
fn refused(args: &[&str]) -> String {
    let out = tilepipe()
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains("allowed"), "{args:?}: {err}");
    assert!(
        !err.contains("no CUDA") && !err.contains("panicked"),
        "{args:?}: {err}"
    );
    err
}

#[test]
fn every_argument_is_judged_before_the_gpu_opens() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "kept").unwrap();
    let file = file.to_str().unwrap();
    let below = format!("{file}/below");
    for (args, needle) in [
        (
            vec!["run", "--variants", "nosuch"],
            "no variant matches 'nosuch' (allowed: a name or prefix of sync",
        ),
        (vec!["run", "--variants", ""], "an empty list of variants"),
        (
            vec!["check", "--sanitize", ""],
            "an empty list of sanitizer tools",
        ),
        (
            vec![
                "sweep",
                "--axis",
                "stages=2,3",
                "--axis",
                "stages=4",
                "--out",
                &below,
            ],
            "--axis stages is given twice",
        ),
        (
            vec!["check", "--variants", " , "],
            "an empty list of variants",
        ),
        (vec!["run", "--cache-dir", file], "is a file, not a folder"),
        (
            vec!["run", "--tile-rows", "0"],
            "--tile-rows 0: a slot holds tile rows x hidden 4096 x 2 bytes",
        ),
        (
            vec!["run", "--tile-rows", "29"],
            "must fit in the 232448 bytes of shared memory a block can have (H100/H200); allowed: 1..=28",
        ),
        (
            vec!["run", "--timeline", "nosuch"],
            "no variant matches 'nosuch'",
        ),
        (
            vec!["check", "--sanitize", "nosuch"],
            "unknown sanitizer tool 'nosuch' (allowed: racecheck, synccheck, memcheck)",
        ),
        (
            vec![
                "check",
                "--sanitize",
                "racecheck",
                "--sanitize-variants",
                "nosuch",
            ],
            "no variant matches 'nosuch'",
        ),
        (
            vec!["check", "--variants", "nosuch"],
            "no variant matches 'nosuch'",
        ),
        (
            vec!["check", "--suite-hidden", "4096,3"],
            "hidden 3 is not a multiple of 4",
        ),
        (vec!["run", "--out", file], "is a file, not a folder"),
        (vec!["run", "--out", &below], "cannot be created"),
        (vec!["check", "--out", file], "is a file, not a folder"),
        (vec!["timeline", "--out", file], "is a file, not a folder"),
        (vec!["sweep", "--out", file], "is a file, not a folder"),
        (vec!["timeline", "nosuch"], "no variant matches 'nosuch'"),
        (
            vec!["probe", "cpasync"],
            "'cpasync' names no one variant: the full name is needed",
        ),
        (
            vec!["sweep", "--hidden", "3"],
            "hidden 3 is not a multiple of 8",
        ),
        (
            vec!["sweep", "--hidden", "4", "--axis", "dtype=f32,bf16"],
            "hidden 4 is not a multiple of 8",
        ),
        (
            vec!["sweep", "--axis", "tiles=100000000000"],
            "100000000000 tiles of 2 rows are more rows than the kernels' 32-bit counts hold; allowed: tiles x tile_rows <= 2147483647",
        ),
        (
            vec!["sweep", "--axis", "tile_rows=1,29"],
            "--tile-rows 29: a slot holds",
        ),
        (
            vec!["sass", "tma-s3", "--arch", "sm_80"],
            "tma needs sm_90 or newer; this build is for sm_80",
        ),
        (
            vec![
                "sass",
                "tma-wgmma-s4",
                "--workload",
                "gemm",
                "--dtype",
                "bf16",
                "--arch",
                "sm_100a",
            ],
            "uses sm_90a's own instructions (wgmma, setmaxnreg); this build is for sm_100",
        ),
        (
            vec!["sweep", "--tokens", "4096", "--offset", "8"],
            "so --tokens, --offset cannot be taken (allowed: --dtype and the base --hidden",
        ),
        (
            vec!["sweep", "--workload", "gemm", "--k", "512"],
            "so --k cannot be taken",
        ),
        (
            vec!["run", "--tokens", "1099511627776"],
            "tokens 1099511627776 is more than the kernels' 32-bit row and tile counts hold; allowed: tokens = 1..=2147483647",
        ),
        (
            vec!["run", "--offset", "18446744073709551615"],
            "the view's extent (offset 18446744073709551615 + 262143 rows x stride 4096 + hidden 4096) does not fit in 64 bits",
        ),
        (
            vec!["run", "--tokens", "4503599627370497", "--alloc", "4096"],
            "allowed: tokens = 1..=2147483647",
        ),
        // within the 32-bit row count, the extent itself wraps
        (
            vec![
                "run",
                "--tokens",
                "2147483647",
                "--hidden",
                "64",
                "--row-stride",
                "1099511627776",
            ],
            "does not fit in 64 bits",
        ),
        (
            vec!["lab", "queue", "--script", "step 100000000000"],
            "'100000000000' is not a step count (allowed: 0..=1000000)",
        ),
    ] {
        let err = refused(&args);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // nothing was written beside the file, and the file is intact
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    assert_eq!(std::fs::read(file).unwrap(), b"kept");
}

#[test]
#[cfg_attr(
    not(target_os = "linux"),
    ignore = "host memory is read from Linux's /proc/meminfo"
)]
fn a_view_larger_than_host_memory_is_refused_with_the_bytes() {
    assert!(
        tilepipe::meminfo::available().is_some(),
        "/proc/meminfo has no MemAvailable (Linux has had it since 3.14)"
    );
    // 2^31 - 1 rows of 128 KiB: 256 TiB in, twice that out
    let err = refused(&["run", "--tokens", "2147483647", "--hidden", "65536"]);
    assert!(
        err.contains("844424929738752 bytes (805306367 MiB) of host memory needed, "),
        "{err}"
    );
}

#[test]
fn the_interactive_lab_without_a_terminal_says_to_use_a_script() {
    // the test harness gives the child pipes, not a terminal
    let err = refused(&["lab", "queue"]);
    assert!(
        err.contains("needs a terminal") && err.contains("--script"),
        "{err}"
    );
}

#[test]
fn model_skips_a_record_it_cannot_take_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("sweep.jsonl");
    let text = std::fs::read_to_string(fixture("sweep.jsonl")).unwrap();
    let first = text.lines().next().unwrap().replace(
        "\"steps_per_block\":1,",
        "\"steps_per_block\":1000000000000000,",
    );
    assert!(first.contains("1000000000000000"));
    std::fs::write(&p, format!("{first}\n{text}")).unwrap();
    let out = tilepipe()
        .arg("model")
        .arg("--from")
        .arg(&p)
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("line 1: a sweep record the model cannot take: tiles_per_block 1000000000000000 (allowed: 0..=2147483647"),
        "{err}"
    );
    assert!(String::from_utf8(out.stdout).unwrap().contains("predicted"));
}

#[test]
fn readme_and_errors_state_the_architectures_the_code_enforces() {
    use tilepipe::pipeline::Mechanism;
    let readme = std::fs::read_to_string(format!("{}/README.md", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(Mechanism::Sync.min_sm(), 70);
    assert_eq!(Mechanism::Regprefetch.min_sm(), 70);
    assert_eq!(Mechanism::Cpasync.min_sm(), 80);
    assert_eq!(Mechanism::MemcpyAsyncPipeline.min_sm(), 80);
    assert_eq!(Mechanism::Tma.min_sm(), 90);
    assert_eq!(Mechanism::Bulk.min_sm(), 90);
    for claim in [
        "an sm_70 or newer GPU",
        "`regprefetch` run from sm_70; cp.async and memcpy_async need sm_80, bulk and TMA sm_90",
    ] {
        assert!(readme.contains(claim), "README lacks '{claim}'");
    }
    let too_old = tilepipe::Error::ArchTooOld { major: 6, minor: 1 }.to_string();
    assert!(too_old.contains("needs sm_70 or newer"), "{too_old}");
    let no_driver = tilepipe::Error::NoDriver { detail: "x".into() }.to_string();
    assert!(no_driver.contains("sm_70 or newer GPU"), "{no_driver}");
}

#[test]
fn report_judges_its_output_folder_before_reading_anything() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("afile");
    std::fs::write(&file, "keep").unwrap();
    let out = tilepipe()
        .args(["report", &fixture("results.json"), "--out"])
        .arg(file.join("x.html"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_says(&out, "is a file, not a folder");
    assert!(out.stdout.is_empty(), "nothing printed before the refusal");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
}

#[test]
fn a_negative_or_non_numeric_size_names_what_is_allowed() {
    for (flag, value, allowed) in [
        ("--tokens", "-5", "allowed: 0, 1, 2, ..."),
        ("--m", "-1", "allowed: 0, 1, 2, ..."),
        (
            "--seed",
            "NaN",
            "allowed: a whole number from 0 to 18446744073709551615",
        ),
    ] {
        let out = tilepipe()
            .args(["run", flag, value])
            .env("CUDA_VISIBLE_DEVICES", "")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        let err = stderr_of(&out);
        assert!(err.contains(flag) && err.contains(allowed), "{err}");
        assert!(!err.contains("unexpected argument"), "{err}");
    }
}

/// git in `dir`, as a scratch repository's author; its stdout, trimmed.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", stderr_of(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `--version` names the commit the binary was built from, by build.rs's own rule (build/commit.rs)
/// applied to this checkout now; and that rule, on a scratch repository, tells a clean commit from
/// changed sources, ignores a changed document, and says "unknown" for a tree without its .git.
/// build.rs reruns when HEAD or its branch moves, a linked worktree's included.
#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let out = tilepipe().arg("--version").output().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let built = format!("{} ({})", env!("CARGO_PKG_VERSION"), commit::describe(root));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("tilepipe {built}")
    );

    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/lib.rs"), "// one\n").unwrap();
    std::fs::write(repo.join("README.md"), "one\n").unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "one"]);
    let first = git(&repo, &["rev-parse", "--short", "HEAD"]);
    assert_eq!(commit::describe(&repo), first);
    std::fs::write(repo.join("README.md"), "two\n").unwrap();
    assert_eq!(commit::describe(&repo), first, "a document is no source");
    std::fs::write(repo.join("src/lib.rs"), "// two\n").unwrap();
    assert_eq!(commit::describe(&repo), format!("{first}+changes"));
    std::fs::write(repo.join("src/lib.rs"), "// one\n").unwrap();
    std::fs::write(repo.join("src/new.rs"), "// new\n").unwrap();
    assert_eq!(
        commit::describe(&repo),
        format!("{first}+changes"),
        "a new source"
    );
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "two"]);
    let second = git(&repo, &["rev-parse", "--short", "HEAD"]);
    assert_ne!(second, first);
    assert_eq!(commit::describe(&repo), second);
    // a copy without .git: inside another checkout, or alone
    assert_eq!(commit::describe(&repo.join("src")), "unknown");
    assert_eq!(commit::describe(tmp.path()), "unknown");
    assert!(commit::git_files(tmp.path()).is_empty());

    let watched = |dir: &Path| -> Vec<String> {
        let files = commit::git_files(dir);
        files
            .iter()
            .map(|f| f.canonicalize().unwrap().display().to_string())
            .collect()
    };
    let git_dir = repo.join(".git").canonicalize().unwrap();
    let main = watched(&repo);
    for f in ["HEAD", "refs/heads/main"] {
        let want = git_dir.join(f).display().to_string();
        assert!(main.contains(&want), "{want} in {main:?}");
    }
    // a linked worktree: its .git is a file; its HEAD is its own, its branch the main checkout's
    let linked = tmp.path().join("linked");
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "side",
            linked.to_str().unwrap(),
        ],
    );
    assert!(linked.join(".git").is_file());
    assert_eq!(commit::describe(&linked), second);
    let side = watched(&linked);
    for f in ["worktrees/linked/HEAD", "refs/heads/side"] {
        let want = git_dir.join(f).display().to_string();
        assert!(side.contains(&want), "{want} in {side:?}");
    }
    // a branch held only in packed-refs is watched by the folder a commit writes it into
    git(&repo, &["pack-refs", "--all"]);
    assert!(!git_dir.join("refs/heads/main").exists());
    let packed = watched(&repo);
    for f in ["packed-refs", "refs/heads"] {
        let want = git_dir.join(f).display().to_string();
        assert!(packed.contains(&want), "{want} in {packed:?}");
    }
}
