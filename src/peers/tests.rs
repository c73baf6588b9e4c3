//! The peer protocol against stand-ins for Python: shell scripts that answer as the helper script
//! would (a correct output, a wrong one, a skip, a crash), and the real helper script under
//! whatever python3 this machine has.

use super::*;
use crate::dtype::DType;
use crate::results::Status;
use crate::results::timing::TimingOptions;
use crate::workload::Workload;
use crate::workload::copy::Copy;
use crate::workload::gemm::{Gemm, Inputs};
use crate::workload::rows::{HostData, RowProblem, Rows, View};
use std::os::unix::fs::PermissionsExt;

const COPY: Rows = Rows(&Copy);

fn problem() -> RowProblem {
    let view = View::new(6, 64, Some(72), 8, None, DType::Bf16).expect("a valid view");
    RowProblem::new(view, DType::Bf16, Some(2))
}

fn data() -> HostData {
    COPY.inputs(&problem(), 7)
}

/// The torch peers of the copy workload on `d`.
fn rows_torch(req: &TorchRequest, d: &HostData, clock: Clock) -> Vec<Peer> {
    let p = problem();
    torch(req, COPY.peer_subject(&p, d, None).as_ref(), clock)
}

/// The copy workload's exact output: the view's rows, densely.
fn dense(d: &HostData) -> Vec<u8> {
    let es = d.dtype.size();
    (0..d.view.tokens)
        .flat_map(|r| {
            let i = d.view.index(r, 0) * es;
            d.x[i..i + d.view.hidden * es].to_vec()
        })
        .collect()
}

fn request(python: PathBuf) -> TorchRequest {
    TorchRequest {
        python,
        device: 0,
        buffer_sets: 3,
        timing: TimingOptions::default(),
        ceiling_gbps: Some(4000.0),
        baseline_ms: Some(0.02),
    }
}

/// An executable shell script standing in for Python (it is handed the helper's path and ignores it).
fn fake_python(dir: &Path, body: &str) -> PathBuf {
    let p = dir.join("python");
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

use std::path::Path;

#[test]
fn a_correct_output_is_timed_and_a_wrong_one_is_not() {
    let d = data();
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.bin");
    let bad = dir.path().join("bad.bin");
    std::fs::write(&good, dense(&d)).unwrap();
    let mut wrong = dense(&d);
    wrong[10] ^= 0x40; // one element off: a copy must be exact
    std::fs::write(&bad, wrong).unwrap();
    let asked = dir.path().join("asked.json");
    let py = fake_python(
        dir.path(),
        &format!(
            r#"read spec
echo 'torch noise on stdout'
echo '{{"event":"outputs","peers":[{{"name":"torch eager","version":"torch 9","math":"m","out":"{}"}},{{"name":"torch.compile","version":"torch 9","math":"m","out":"{}"}}]}}'
read t; echo "$t" > {}
echo '{{"event":"timings","peers":[{{"name":"torch eager","device_ms":[0.010,0.011,0.012],"host_submit_us":[5,6,7],"warmup":5,"buffer_sets":3}}]}}'"#,
            good.display(),
            bad.display(),
            asked.display()
        ),
    );
    let peers = rows_torch(&request(py), &d, &|| None);
    assert_eq!(peers.len(), 2);
    let (eager, compiled) = (&peers[0], &peers[1]);
    assert_eq!(eager.status, Status::Passed, "{:?}", eager.detail);
    let t = eager.timing.as_ref().expect("timed");
    assert_eq!((t.device.median, t.buffer_sets, t.warmup), (0.011, 3, 5));
    let perf = eager.perf.clone().expect("perf");
    assert!((perf.speedup_vs_sync.unwrap() - 0.02 / 0.011).abs() < 1e-9);
    assert!(
        eager
            .checked
            .as_deref()
            .unwrap()
            .contains("0 beyond tolerance")
    );
    assert_eq!(compiled.status, Status::Failed);
    assert!(
        compiled
            .detail
            .as_deref()
            .unwrap()
            .starts_with("validation:")
    );
    assert!(compiled.timing.is_none());
    // only what validated was sent to be timed
    let sent = std::fs::read_to_string(&asked).unwrap();
    assert_eq!(sent.trim(), r#"{"time":["torch eager"]}"#);
}

#[test]
fn each_peer_is_timed_alone_with_the_clocks_read_around_and_during_it() {
    let d = data();
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.bin");
    std::fs::write(&good, dense(&d)).unwrap();
    let asked = dir.path().join("asked");
    let py = fake_python(
        dir.path(),
        &format!(
            r#"read spec
p='"version":"torch 9","math":"m","out":"{good}"'
echo '{{"event":"outputs","peers":[{{"name":"torch eager",'$p'}},{{"name":"torch.compile",'$p'}}]}}'
while read t; do
  echo "$t" >> {asked}
  sleep 0.35
  case "$t" in *eager*) n="torch eager";; *) n="torch.compile";; esac
  echo '{{"event":"timings","peers":[{{"name":"'"$n"'","device_ms":[0.010,0.011],"host_submit_us":[5,6],"warmup":5,"buffer_sets":3}}]}}'
done"#,
            good = good.display(),
            asked = asked.display()
        ),
    );
    // a GPU slowing down as it is read: 1980 MHz, then 15 MHz less at each reading, power-capped
    let reads = std::cell::Cell::new(0u32);
    let clock = || {
        reads.set(reads.get() + 1);
        Some(crate::clocks::ClockSample {
            sm_mhz: 1995 - 15 * reads.get(),
            mem_mhz: 3201,
            temp_c: 50,
            power_w: 690.0,
            throttle: if reads.get() > 1 {
                vec!["sw_power_cap".into()]
            } else {
                vec![]
            },
        })
    };
    let peers = rows_torch(&request(py), &d, &clock);
    let sent = std::fs::read_to_string(&asked).unwrap();
    assert_eq!(
        sent.lines().collect::<Vec<_>>(),
        [
            r#"{"time":["torch eager"]}"#,
            r#"{"time":["torch.compile"]}"#
        ],
        "one request per peer"
    );
    let traces: Vec<_> = peers
        .iter()
        .map(|p| {
            p.timing
                .as_ref()
                .expect("timed")
                .clocks
                .clone()
                .expect("clocks read")
        })
        .collect();
    for (p, t) in peers.iter().zip(&traces) {
        // before, at least twice while the script timed it (0.35 s at one reading per 0.1 s), after
        assert!(t.samples.len() >= 4, "{}: {:?}", p.name, t.samples);
        let w = t
            .warning
            .as_deref()
            .expect("the clock moved past the tolerance");
        assert!(w.contains("sw_power_cap"), "{w}");
    }
    // each peer has its own readings, the second's after the first's
    let last_of_first = traces[0].samples.last().unwrap().sm_mhz;
    assert!(traces[1].samples.iter().all(|s| s.sm_mhz < last_of_first));
    assert_eq!(traces[0].samples[0].sm_mhz, 1980);
}

#[test]
fn an_output_of_the_wrong_size_fails_with_both_sizes() {
    let d = data();
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("short.bin");
    std::fs::write(&short, &dense(&d)[..100]).unwrap();
    let py = fake_python(
        dir.path(),
        &format!(
            r#"read spec
echo '{{"event":"outputs","peers":[{{"name":"torch eager","out":"{}"}},{{"name":"torch.compile","skip":"BackendCompilerFailed: no triton"}}]}}'
read t; echo '{{"event":"timings","peers":[]}}'"#,
            short.display()
        ),
    );
    let peers = rows_torch(&request(py), &d, &|| None);
    assert_eq!(peers[0].status, Status::Failed);
    let why = peers[0].detail.as_deref().unwrap();
    assert!(why.contains("100 bytes") && why.contains("768"), "{why}");
    assert_eq!(peers[1].status, Status::Skipped);
    assert!(peers[1].detail.as_deref().unwrap().contains("no triton"));
}

#[test]
fn a_script_that_skips_skips_both_peers_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let py = fake_python(
        dir.path(),
        r#"read spec; echo '{"event":"skip","reason":"cannot import torch"}'"#,
    );
    let peers = rows_torch(&request(py), &data(), &|| None);
    assert!(
        peers
            .iter()
            .all(|p| p.status == Status::Skipped
                && p.detail.as_deref() == Some("cannot import torch"))
    );
}

#[test]
fn a_script_that_dies_is_an_error_with_its_exit_code_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let py = fake_python(dir.path(), "read spec; echo 'Traceback: boom' >&2; exit 3");
    let peers = rows_torch(&request(py), &data(), &|| None);
    for p in &peers {
        assert_eq!(p.status, Status::Error);
        let why = p.detail.as_deref().unwrap();
        assert!(why.contains("exit code 3") && why.contains("boom"), "{why}");
    }
}

#[test]
fn a_missing_python_skips_and_says_how_to_name_one() {
    let peers = rows_torch(&request("/nonexistent/python3".into()), &data(), &|| None);
    for p in &peers {
        assert_eq!(p.status, Status::Skipped);
        assert!(p.detail.as_deref().unwrap().contains("--python"));
    }
}

#[test]
fn the_shipped_script_answers_under_this_machines_python() {
    // whatever python3 is here (CI has no torch and no GPU): the shipped script must answer with a
    // reason, never hang or leave the peers without one
    let peers = rows_torch(&request("python3".into()), &data(), &|| None);
    for p in &peers {
        assert_ne!(
            p.status,
            Status::Passed,
            "no GPU here, yet {} passed",
            p.name
        );
        let why = p.detail.as_deref().unwrap_or_default();
        assert!(
            why.contains("torch") || why.contains("--python"),
            "{}: {why}",
            p.name
        );
    }
}

#[test]
fn the_script_holds_its_batches_by_tilepipes_rule() {
    // the peers' device samples are only comparable if their batches are queued the same way: the
    // script's hold_for (ms from seconds) must give what the engine's hold_for gives
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("torch_peer.py");
    std::fs::write(&script, SCRIPT).unwrap();
    let load = "import importlib.util as u, sys; s = u.spec_from_file_location('p', sys.argv[1]); \
                m = u.module_from_spec(s); s.loader.exec_module(m); \
                print(' '.join(repr(m.hold_for(float(a))) for a in sys.argv[2:]))";
    let submits = [0.0, 0.00003, 0.0003, 0.02, 1.0];
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(load)
        .arg(&script)
        .args(submits.iter().map(|s| s.to_string()))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<f64> = String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    let ours: Vec<f64> = submits
        .iter()
        .map(|&s| crate::engine::time::hold_for(Duration::from_secs_f64(s)).as_secs_f64() * 1e3)
        .collect();
    assert_eq!(theirs.len(), ours.len());
    for (t, o) in theirs.iter().zip(&ours) {
        assert!((t - o).abs() < 1e-9, "script {theirs:?}, tilepipe {ours:?}");
    }
}

/// A small GEMM, its exact C rounded to the precision (what a correct peer returns), and the
/// elements the reference checks (all of them at this size).
fn gemm() -> (Inputs, Vec<u8>) {
    use crate::workload::gemm::{Layout, Problem, reference};
    let p = Problem::new(8, 12, 16, Layout::Nk, DType::Bf16).unwrap();
    let x = Inputs::new(p, 5);
    let mut c = Vec::new();
    for i in 0..p.m {
        for j in 0..p.n {
            p.dtype
                .push(reference::reference(&x, i, j).0 as f32, &mut c);
        }
    }
    assert_eq!(x.elements.len(), p.m * p.n);
    (x, c)
}

fn gemm_request(python: PathBuf) -> TorchRequest {
    TorchRequest {
        buffer_sets: 1,
        ceiling_gbps: None,
        baseline_ms: None,
        ..request(python)
    }
}

#[test]
fn gemm_peers_are_judged_like_the_variants_and_get_tflops() {
    let (x, c) = gemm();
    let dir = tempfile::tempdir().unwrap();
    let (good, bad, spec) = (
        dir.path().join("good.bin"),
        dir.path().join("bad.bin"),
        dir.path().join("spec.json"),
    );
    std::fs::write(&good, &c).unwrap();
    let mut wrong = c.clone();
    let (mut far, es) = (Vec::new(), x.problem.dtype.size());
    x.problem.dtype.push(100.0, &mut far);
    wrong[17 * es..18 * es].copy_from_slice(&far); // C[1][5] far off
    std::fs::write(&bad, &wrong).unwrap();
    let py = fake_python(
        dir.path(),
        &format!(
            r#"read spec; echo "$spec" > {}
echo '{{"event":"outputs","peers":[{{"name":"torch.matmul","out":"{}"}},{{"name":"torch.compile, Triton matmul","out":"{}"}}]}}'
read t; echo '{{"event":"timings","peers":[{{"name":"torch.matmul","device_ms":[0.010,0.011,0.012],"host_submit_us":[5,6,7],"warmup":5,"buffer_sets":1}}]}}'"#,
            spec.display(),
            good.display(),
            bad.display()
        ),
    );
    let subject = Gemm.peer_subject(&x.problem, &x, Some(&c));
    let peers = torch(&gemm_request(py), subject.as_ref(), &|| None);
    let (mm, triton) = (&peers[0], &peers[1]);
    assert_eq!(mm.status, Status::Passed, "{:?}", mm.detail);
    let checked = mm.checked.as_deref().unwrap();
    assert!(
        checked.contains("f64 reference: 96 elements within bounds")
            && checked.contains("cuBLAS: 96 elements within bounds"),
        "{checked}"
    );
    let want = x.problem.flops() as f64 / (0.011 * 1e9);
    let perf = mm.perf.as_ref().unwrap();
    assert!((perf.tflops.unwrap() - want).abs() < 1e-12);
    assert!(
        perf.pct_of_ceiling.is_none(),
        "the run sets its share of cuBLAS"
    );
    assert_eq!(triton.status, Status::Failed);
    let why = triton.detail.as_deref().unwrap();
    assert!(why.contains("C[1][5] = 100"), "{why}");
    // the script was given the GEMM and its inputs, one set, as the variants are timed (hot)
    let spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&spec).unwrap()).unwrap();
    assert_eq!(spec["dtype"], "bf16");
    assert_eq!(
        spec["gemm"],
        serde_json::json!({"m": 8, "n": 12, "k": 16, "layout": "nk"})
    );
    assert_eq!(spec["buffer_sets"], 1);
    // the scratch folder is gone with the session, so the file names are all that is left
    assert!(spec["a"].as_str().unwrap().ends_with("/a.bin"));
    assert!(spec["b"].as_str().unwrap().ends_with("/b.bin"));
    assert!(spec.get("view").is_none() && spec.get("x").is_none());
}

#[test]
fn gemm_peers_without_torch_are_skipped_under_their_own_names() {
    let (x, _) = gemm();
    let subject = Gemm.peer_subject(&x.problem, &x, None);
    let peers = torch(
        &gemm_request("/nonexistent/python3".into()),
        subject.as_ref(),
        &|| None,
    );
    let names: Vec<&str> = peers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["torch.matmul", "torch.compile, Triton matmul"]);
    assert!(peers.iter().all(|p| p.status == Status::Skipped));
}

/// Loads the shipped script and `subject`'s module beside it as the session lays them out; what
/// Python prints: the peers function's name and the extra spellings the module names.
fn load_module(subject: &dyn Subject) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("torch_peer.py"), SCRIPT).unwrap();
    std::fs::write(dir.path().join("workload_peers.py"), subject.script()).unwrap();
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import sys; sys.path.insert(0, sys.argv[1]); import workload_peers as w; \
              print(w.peers.__name__, sorted(getattr(w, 'EXTRA', {})))",
        )
        .arg(dir.path())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn every_workload_ships_its_own_peers_module() {
    use crate::workload::rmsnorm::RmsNorm;
    let p = problem();
    let norm = Rows(&RmsNorm);
    let d = norm.inputs(&p, 7);
    assert_eq!(
        load_module(norm.peer_subject(&p, &d, None).as_ref()),
        "peers ['torch eager, F.rms_norm']"
    );
    let d = data();
    assert_eq!(
        load_module(COPY.peer_subject(&p, &d, None).as_ref()),
        "peers []"
    );
    let (x, _) = gemm();
    assert_eq!(
        load_module(Gemm.peer_subject(&x.problem, &x, None).as_ref()),
        "peers []"
    );
}
