//! The commands that write files into a folder that may hold earlier outputs (merge, compare,
//! report) and model, which writes none, under two faults: a refused input, and Ctrl-C at any
//! moment of the work. After a refusal every file there is byte-identical; after Ctrl-C each
//! output is the old file or the whole new one, never part of either.

use assert_cmd::Command;
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// Every file under `dir` (hidden ones too) and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            out.insert(
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            );
        }
    }
    out
}

/// A folder holding what an earlier run left: each of `names` with bytes no run writes.
fn earlier(dir: &Path, names: &[&str]) -> BTreeMap<String, Vec<u8>> {
    std::fs::create_dir_all(dir).unwrap();
    for n in names {
        std::fs::write(dir.join(n), format!("an earlier run's {n}\n")).unwrap();
    }
    snapshot(dir)
}

fn args_with(args: &[&str], out: &Path) -> Vec<String> {
    args.iter()
        .map(|a| {
            a.replace("FIX", FIXTURES)
                .replace("OUT", &out.display().to_string())
        })
        .collect()
}

/// (the command with the right input, the same refused, the outputs it writes into OUT).
const CASES: &[(&[&str], &[&str], &[&str])] = &[
    (
        &["merge", "FIX/sweep.jsonl", "--out", "OUT"],
        &[
            "merge",
            "FIX/sweep.jsonl",
            "FIX/gemm-sweep-bf16.jsonl",
            "--out",
            "OUT",
        ],
        &[
            "sweep.jsonl",
            "bandwidth.svg",
            "speedup-vs-stages.svg",
            "time-per-tile.svg",
        ],
    ),
    (
        &[
            "compare",
            "FIX/results.json",
            "FIX/results.json",
            "--out",
            "OUT",
        ],
        &[
            "compare",
            "FIX/results.json",
            "FIX/gemm-h200.json",
            "--out",
            "OUT",
        ],
        &["compare.html"],
    ),
    (
        &["report", "FIX/results.json", "--out", "OUT"],
        &["report", "FIX/sweep.jsonl", "--out", "OUT"],
        &["report.html"],
    ),
    (
        &["model", "--from", "OUT/sweep.jsonl"],
        &["model", "--from", "OUT/report.html"],
        &[],
    ),
];

#[test]
fn a_refused_command_leaves_every_earlier_output_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, &(_, refused, outputs)) in CASES.iter().enumerate() {
        let out = tmp.path().join(i.to_string());
        let mut names = outputs.to_vec();
        names.extend(["sweep.jsonl", "report.html", "notes.txt"]);
        names.dedup();
        let before = earlier(&out, &names);
        let got = Command::cargo_bin("tilepipe")
            .unwrap()
            .args(args_with(refused, &out))
            .env("CUDA_VISIBLE_DEVICES", "")
            .output()
            .unwrap();
        assert_eq!(got.status.code(), Some(2), "{refused:?}: {got:?}");
        assert_eq!(snapshot(&out), before, "{refused:?} changed its folder");
    }
}

/// Ctrl-C after 0 to 60 ms: the run ends anywhere from before its first read to after its last
/// write. Each output must then be the earlier file or the complete new one.
#[test]
fn ctrl_c_at_any_moment_leaves_each_output_old_or_whole() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, &(good, _, outputs)) in CASES.iter().enumerate() {
        if outputs.is_empty() {
            continue;
        }
        // what a run to its end writes
        let whole_dir = tmp.path().join(format!("{i}-whole"));
        std::fs::create_dir_all(&whole_dir).unwrap();
        std::fs::copy(
            Path::new(FIXTURES).join("sweep.jsonl"),
            whole_dir.join("sweep.jsonl"),
        )
        .unwrap();
        let ran = Command::cargo_bin("tilepipe")
            .unwrap()
            .args(args_with(good, &whole_dir))
            .env("CUDA_VISIBLE_DEVICES", "")
            .output()
            .unwrap();
        assert!(ran.status.success(), "{good:?}: {ran:?}");
        let whole = snapshot(&whole_dir);
        let (mut interrupted, mut finished) = (0, 0);
        for delay_ms in (0..=60).step_by(3) {
            let out = tmp.path().join(format!("{i}-{delay_ms}"));
            let before = earlier(&out, outputs);
            let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tilepipe"))
                .args(args_with(good, &out))
                .env("CUDA_VISIBLE_DEVICES", "")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(delay_ms));
            let _ = std::process::Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status();
            let status = child.wait().unwrap();
            // before its handler is in place, Ctrl-C ends the process as the signal's default does
            match (status.code(), status.signal()) {
                (Some(130), _) | (None, Some(2)) => interrupted += 1,
                (Some(0), _) => finished += 1,
                other => panic!("{good:?} after {delay_ms} ms: {other:?}"),
            }
            let after = snapshot(&out);
            for name in outputs {
                let now = after.get(*name);
                assert!(
                    now == before.get(*name) || now == whole.get(*name),
                    "{good:?}, Ctrl-C after {delay_ms} ms: {name} is neither the earlier file nor the whole new one"
                );
            }
        }
        // the faults did fall inside the work, not only before or after it
        assert!(
            interrupted > 0,
            "{good:?}: every run finished before Ctrl-C"
        );
        assert!(finished + interrupted == 21, "{good:?}");
    }
}
