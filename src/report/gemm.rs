//! Results of a GEMM run (results.json of `run --workload gemm`), plain data:
//! - `device`, `toolchain`, `command`, `seed`; `problem` {m, n, k, layout (kn | nk), dtype}
//! - `cublas`: the vendor library on the same problem in the same run (version, status, detail,
//!   timing, tflops, math: TF32 off), its C the reference for numbers beside the f64 host one
//! - `variants[]`: name, mechanism, stages, copy_bytes, tile {bm, bn, bk, warps_m, warps_n,
//!   min_blocks}, control, status, detail, build options, resources (registers, shared memory,
//!   occupancy and its limiter), sass (movement attestation), math (HMMA + LDSM or FFMA),
//!   completion, validation[] {case, verdicts[] {against, checked, failures, max_ratio, worst}},
//!   timing, tflops, pct_of_cublas, speedup_vs_sync
//! - `notes[]`

use super::Status;
use crate::bench::stats::Timing;
use crate::gpu::DeviceInfo;
use crate::resources::Resources;
use crate::sass::{Attestation, SassEvidence};
use crate::toolchain::Toolchain;
use crate::variant::{Control, Mechanism};
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
    pub variants: Vec<GemmResult>,
    pub notes: Vec<String>,
}

/// A library run beside tilepipe's kernels on the same problem, timed the same way.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Peer {
    pub name: String,
    pub version: Option<String>,
    pub status: Status,
    pub detail: Option<String>,
    /// How it was asked to compute (precision, math mode).
    pub math: String,
    pub timing: Option<Timing>,
    pub tflops: Option<f64>,
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
    pub speedup_vs_sync: Option<f64>,
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
