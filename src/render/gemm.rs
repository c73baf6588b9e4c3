//! Results of a GEMM run (results.json of `run --workload gemm`), plain data:
//! - `device`, `toolchain`, `command`, `seed`; `problem` {m, n, k, layout (kn | nk), dtype}
//! - `cublas`: the vendor library on the same problem in the same run (version, status, detail,
//!   timing, tflops, math: TF32 off), its C the reference for numbers beside the f64 host one
//! - `peers[]` (`--peers torch`): torch.matmul and torch.compile's Triton matmul, the same fields
//!   plus `checked` (how their C was validated)
//! - `variants[]`: name, mechanism, stages, copy_bytes, tile {bm, bn, bk, warps_m, warps_n,
//!   min_blocks}, control, status, detail, build options, resources (registers, shared memory,
//!   occupancy and its limiter), sass (movement attestation), math (HMMA + LDSM or FFMA),
//!   completion, validation[] {case, verdicts[] {against, checked, failures, max_ratio, worst}},
//!   timing, tflops, pct_of_cublas, speedup_vs_sync, speedup_vs_regprefetch (same tile only)
//! - `notes[]`

use super::Status;
pub use super::peer::Peer;
use crate::bench::stats::{Repeat, Timing};
use crate::evidence::resources::Resources;
use crate::evidence::sass::{Attestation, SassEvidence};
use crate::gpu::DeviceInfo;
use crate::pipeline::{Control, Mechanism};
use crate::toolchain::Toolchain;
use crate::workload::gemm::Problem;
use crate::workload::gemm::catalogue::Tile;
use crate::workload::gemm::reference::Verdict;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GemmRun {
    pub tilepipe_version: String,
    pub created_unix_s: u64,
    pub command: Vec<String>,
    pub device: DeviceInfo,
    pub toolchain: Toolchain,
    pub problem: Problem,
    pub seed: u64,
    pub cublas: Peer,
    /// torch.matmul and torch.compile's Triton matmul (`--peers torch`), validated and timed alike.
    #[serde(default)]
    pub peers: Vec<Peer>,
    /// cuBLAS timed again after every variant and peer: the GPU ran it cool first, the others hot.
    #[serde(default)]
    pub repeat: Option<Repeat>,
    pub variants: Vec<GemmResult>,
    pub notes: Vec<String>,
}

/// One variant's validation on one problem.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseVerdicts {
    pub case: String,
    pub verdicts: Vec<Verdict>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GemmResult {
    pub name: String,
    pub mechanism: Mechanism,
    pub stages: u32,
    pub copy_bytes: u32,
    pub tile: Tile,
    pub control: Option<Control>,
    pub status: Status,
    pub detail: Option<String>,
    pub options: Vec<String>,
    pub resources: Option<Resources>,
    pub sass: Option<SassEvidence>,
    /// Does the SASS do the math the variant claims (tensor-core MMAs fed by ldmatrix, or FFMA)?
    pub math: Option<Attestation>,
    pub completion: String,
    pub validation: Vec<CaseVerdicts>,
    pub timing: Option<Timing>,
    pub tflops: Option<f64>,
    pub pct_of_cublas: Option<f64>,
    /// Why `pct_of_cublas` is not a comparison at one SM clock, if it is not (shown with a `*`).
    #[serde(default)]
    pub cublas_clocks: Option<String>,
    pub speedup_vs_sync: Option<f64>,
    /// Over the register double buffer on the same tile (pre-Ampere pipelining).
    pub speedup_vs_regprefetch: Option<f64>,
}

impl GemmResult {
    /// The first failure stands: a later stage never overwrites why a variant stopped.
    pub fn fail(&mut self, status: Status, detail: String) {
        if self.status == Status::Passed {
            self.status = status;
            self.detail = Some(detail);
        }
    }
}

/// TFLOP/s of `flops` in `ms`.
pub fn tflops(flops: u64, ms: f64) -> f64 {
    flops as f64 / (ms * 1e9)
}

pub const HEADER: [&str; 15] = [
    "variant",
    "tile",
    "stages",
    "B/copy",
    "regs",
    "smem KiB",
    "blocks/SM",
    "movement",
    "math",
    "status",
    "median us",
    "TFLOP/s",
    "% cuBLAS",
    "vs sync",
    "vs regprefetch",
];
/// The columns that hold one number.
pub const RIGHT: [usize; 10] = [2, 3, 4, 5, 6, 10, 11, 12, 13, 14];

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.digits$}"))
}

/// The table as CSV (fields quoted where they hold a comma: a peer's name does).
pub fn csv(r: &GemmRun) -> String {
    super::formats::csv_doc(&HEADER, rows(r))
}

/// Why a torch peer's % of cuBLAS is not a comparison at one clock, if it is not (None also where
/// either has no clock readings: a run recorded before the peers' clocks were read).
pub fn peer_clocks(r: &GemmRun, p: &Peer) -> Option<String> {
    let theirs = r.cublas.timing.as_ref()?.clocks.as_ref()?;
    let mine = p.timing.as_ref()?.clocks.as_ref()?;
    crate::clocks::unmatched("cuBLAS", theirs, mine)
}

/// A library's row: its name and version, status, time, TFLOP/s and % of cuBLAS's (marked `*`
/// where the two ran at different clocks).
fn peer_row(p: &Peer, label: String, cublas_tflops: Option<f64>, apart: bool) -> [String; 15] {
    let dash = || "-".to_string();
    [
        label,
        dash(),
        dash(),
        dash(),
        dash(),
        dash(),
        dash(),
        dash(),
        dash(),
        p.status.label().into(),
        num(p.timing.as_ref().map(|t| t.device.median * 1e3), 1),
        num(p.tflops, 1),
        match p.tflops.zip(cublas_tflops).map(|(t, c)| 100.0 * t / c) {
            Some(pct) if apart => format!("{pct:.1}*"),
            pct => num(pct, 1),
        },
        dash(),
        dash(),
    ]
}

/// cuBLAS first, then the torch peers, then one row per variant (a failed or skipped one with its
/// status and no time).
pub fn rows(r: &GemmRun) -> Vec<[String; 15]> {
    let c = &r.cublas;
    let label = format!("cuBLAS {}", c.version.as_deref().unwrap_or(""));
    let mut out = vec![peer_row(c, label.trim_end().to_string(), c.tflops, false)];
    for p in &r.peers {
        let apart = peer_clocks(r, p).is_some();
        out.push(peer_row(p, format!("{} (peer)", p.name), c.tflops, apart));
    }
    for v in &r.variants {
        let res = v.resources.as_ref();
        out.push([
            v.name.clone(),
            v.tile.label(),
            v.stages.to_string(),
            v.copy_bytes.to_string(),
            res.map_or("-".into(), |r| r.function.registers.to_string()),
            res.map_or("-".into(), |r| {
                format!("{:.0}", r.dynamic_smem as f64 / 1024.0)
            }),
            res.map_or("-".into(), |r| {
                format!(
                    "{} ({})",
                    r.occupancy.blocks_per_sm,
                    r.occupancy.limiter.name()
                )
            }),
            v.sass
                .as_ref()
                .map_or("-".into(), |s| s.attestation.label()),
            v.math.as_ref().map_or("-".into(), |m| m.label()),
            v.status.label().into(),
            num(v.timing.as_ref().map(|t| t.device.median * 1e3), 1),
            num(v.tflops, 1),
            match (&v.cublas_clocks, v.pct_of_cublas) {
                (Some(_), Some(p)) => format!("{p:.1}*"),
                _ => num(v.pct_of_cublas, 1),
            },
            num(v.speedup_vs_sync, 2),
            num(v.speedup_vs_regprefetch, 2),
        ]);
    }
    out
}

pub const LADDER_HEADER: [&str; 4] = ["step", "best variant", "TFLOP/s", "over the step before"];
pub const LADDER_RIGHT: [usize; 2] = [2, 3];

/// The Hopper ladder as this run measured it: per step the fastest timed variant and its gain over
/// the step before. Empty when no Hopper variant was timed.
pub fn ladder(r: &GemmRun) -> Vec<[String; 4]> {
    use crate::workload::gemm::hopper::{LADDER, ladder_step};
    let best: Vec<Option<(&str, f64)>> = (0..LADDER.len())
        .map(|step| {
            r.variants
                .iter()
                .filter(|v| ladder_step(&v.name) == Some(step))
                .filter_map(|v| v.tflops.map(|t| (v.name.as_str(), t)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
        })
        .collect();
    let mut out = Vec::new();
    let mut before: Option<f64> = None;
    for (step, b) in LADDER.iter().zip(&best) {
        let Some((name, t)) = b else { continue };
        out.push([
            step.to_string(),
            name.to_string(),
            format!("{t:.1}"),
            before.map_or("-".into(), |p| format!("{:.2}x", t / p)),
        ]);
        before = Some(*t);
    }
    out
}

/// Why each variant that did not pass failed or was skipped.
pub fn problems(r: &GemmRun) -> Vec<String> {
    let mut out: Vec<String> = r
        .variants
        .iter()
        .filter(|v| v.status != Status::Passed)
        .map(|v| {
            format!(
                "{} {}: {}",
                v.name,
                v.status.label(),
                v.detail.as_deref().unwrap_or("")
            )
        })
        .collect();
    if let Some(why) = &r.cublas.detail {
        out.push(format!("cuBLAS {}: {why}", r.cublas.status.label()));
    }
    out.extend(r.peers.iter().filter_map(|p| {
        let why = p.detail.as_ref()?;
        Some(format!("{} (peer) {}: {why}", p.name, p.status.label()))
    }));
    out.extend(r.peers.iter().filter_map(|p| {
        let why = peer_clocks(r, p)?;
        Some(format!("{} (peer) % cuBLAS*: {why}", p.name))
    }));
    out.extend(r.variants.iter().filter_map(|v| {
        let why = v.cublas_clocks.as_ref()?;
        Some(format!("{} % cuBLAS*: {why}", v.name))
    }));
    out
}

impl GemmRun {
    /// A GEMM run's results.json (`run --workload gemm --out`).
    pub fn read(path: &std::path::Path) -> crate::Result<GemmRun> {
        let text = std::fs::read_to_string(path).map_err(|e| crate::Error::io(path, e))?;
        serde_json::from_str(&text).map_err(|e| crate::Error::Format {
            path: path.into(),
            detail: e.to_string(),
        })
    }

    /// Whether a results.json holds a GEMM run (its `problem`) rather than a row workload's.
    pub fn is_gemm(json: &serde_json::Value) -> bool {
        json.get("problem").is_some_and(|p| p.get("m").is_some())
    }

    /// Whether the file at `path` is a GEMM run's results.json (false if it cannot be read as
    /// JSON: the caller's own reader says why).
    pub fn in_file(path: &std::path::Path) -> bool {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|v| GemmRun::is_gemm(&v))
    }

    pub fn write(&self, path: &std::path::Path) -> crate::Result<()> {
        let json = serde_json::to_string_pretty(self).expect("results serialise");
        if let Some(dir) = path.parent() {
            crate::fsio::create_dir_all(dir)?;
        }
        crate::fsio::write_atomic(path, json.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded H200 run (8192^3 bf16, B [N x K]) whose cuBLAS timing ran into the power cap.
    fn hopper_run() -> GemmRun {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        GemmRun::read(&dir.join("tests/fixtures/gemm-h200-hopper.json")).unwrap()
    }

    #[test]
    fn a_ratio_at_unmatched_clocks_is_starred_and_explained() {
        let mut r = hopper_run();
        let theirs = r.cublas.timing.clone().unwrap().clocks.unwrap();
        for v in &mut r.variants {
            let mine = v.timing.as_ref().and_then(|t| t.clocks.clone()).unwrap();
            v.cublas_clocks = crate::clocks::unmatched("cuBLAS", &theirs, &mine);
        }
        let table = rows(&r);
        let ws = table
            .iter()
            .find(|row| row[0] == "tma-wgmma-ws-s4")
            .unwrap();
        assert!(ws[12].ends_with('*'), "{}", ws[12]);
        let why = problems(&r);
        assert!(
            why.iter().any(|p| p.starts_with(
                "tma-wgmma-ws-s4 % cuBLAS*: not at one clock: cuBLAS timed at 1515..1980 MHz"
            )),
            "{why:?}"
        );
        for v in &mut r.variants {
            v.cublas_clocks = None;
        }
        let steps = ladder(&r);
        assert_eq!(steps.len(), 3);
        assert_eq!(
            (
                steps[0][1].as_str(),
                steps[0][2].as_str(),
                steps[0][3].as_str()
            ),
            ("tma-wgmma-s2", "613.0", "-")
        );
        assert_eq!(
            (steps[1][1].as_str(), steps[1][3].as_str()),
            ("tma-wgmma-ws-s4", "1.24x")
        );
        assert_eq!(steps[2][1], "tma-wgmma-ws-persist-s4");
        let ws = rows(&r)
            .into_iter()
            .find(|row| row[0] == "tma-wgmma-ws-s4")
            .unwrap();
        assert_eq!(ws[12], "111.0");
    }

    #[test]
    fn torch_peers_sit_under_cublas_with_their_share_of_it() {
        let mut r = hopper_run();
        let cublas = r.cublas.tflops.unwrap();
        let mut mm = Peer::new("torch.matmul", Some("torch 2.11".into()), "a @ b");
        mm.tflops = Some(cublas * 0.9);
        let mut triton = Peer::new("torch.compile, Triton matmul", None, "max_autotune");
        triton.fail("validation: f64 reference: 3 of 96 elements wrong".into());
        r.peers = vec![mm, triton];
        let table = rows(&r);
        assert!(table[0][0].starts_with("cuBLAS"));
        assert_eq!(table[0][12], "100.0");
        assert_eq!(
            (table[1][0].as_str(), table[1][12].as_str()),
            ("torch.matmul (peer)", "90.0")
        );
        assert_eq!(
            (table[2][9].as_str(), table[2][11].as_str()),
            ("FAILED", "-")
        );
        assert_eq!(table.len(), 3 + r.variants.len());
        assert!(problems(&r).contains(
            &"torch.compile, Triton matmul (peer) FAILED: validation: f64 reference: 3 of 96 elements wrong"
                .to_string()
        ));
        // CSV keeps one field per column, the peer's comma inside quotes
        let doc = csv(&r);
        let line = doc.lines().find(|l| l.contains("Triton matmul")).unwrap();
        assert!(
            line.starts_with("\"torch.compile, Triton matmul (peer)\","),
            "{line}"
        );
        assert_eq!(line.matches(',').count(), HEADER.len());
        // a run recorded before the peers existed reads back without them
        assert!(hopper_run().peers.is_empty());
    }

    #[test]
    fn a_peer_timed_at_other_clocks_than_cublas_is_starred_and_explained() {
        use crate::clocks::{ClockSample, ClockTrace};
        let at = |mhz: &[u32]| {
            let s = mhz.iter().map(|&sm_mhz| ClockSample {
                sm_mhz,
                mem_mhz: 3201,
                temp_c: 50,
                power_w: 500.0,
                throttle: vec![],
            });
            Some(ClockTrace::new(s.collect()))
        };
        let mut r = hopper_run();
        let mut t = r.cublas.timing.clone().unwrap();
        t.clocks = at(&[1980, 1980]);
        r.cublas.timing = Some(t.clone());
        let mut mm = Peer::new("torch.matmul", None, "a @ b");
        mm.tflops = r.cublas.tflops;
        t.clocks = at(&[1980, 1980, 1975]);
        mm.timing = Some(t.clone());
        r.peers = vec![mm];
        assert_eq!(rows(&r)[1][12], "100.0", "the same clock: no mark");
        assert!(!problems(&r).iter().any(|p| p.contains("(peer) % cuBLAS*")));
        t.clocks = at(&[1980, 1860, 1740]);
        r.peers[0].timing = Some(t);
        assert_eq!(rows(&r)[1][12], "100.0*");
        assert!(problems(&r).contains(
            &"torch.matmul (peer) % cuBLAS*: not at one clock: cuBLAS timed at 1980 MHz, this at 1740..1980 MHz".to_string()
        ));
    }
}
