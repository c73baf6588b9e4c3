//! The one result structure every output is rendered from: results.json (schema below), the
//! terminal tables, report.html. Plain data and renderers: the engine fills it in.
//!
//! results.json, schema_version 1:
//! - `tilepipe_version`, `created_unix_s`, `command` (argv)
//! - `device`: name, arch, SMs, memory, L2, shared-memory and register limits, clocks, driver and
//!   NVRTC versions (see gpu::DeviceInfo)
//! - `toolchain`: include folders, nvdisasm / cuobjdump / compute-sanitizer paths
//! - `workload`: name, formula, `view` {tokens, hidden, row_stride, offset, alloc} in elements,
//!   dtype, tile_rows, consumers, seed, eps, bytes_moved (X read once + Y written once)
//! - `ceiling`: device-to-device copy measured in the same run: bytes_copied, samples_ms, time
//!   summary, gbps (read + written)
//! - `cache`: hits, compiled
//! - `variants[]`: name, mechanism, stages, bytes_per_copy, control, warp_specialized, status
//!   (passed | failed | skipped | error), detail (reason or failure), build {cache_hit, options,
//!   log}, resources {threads, function {registers, static_smem, local_bytes, max_threads},
//!   dynamic_smem, slot_footprint, occupancy {blocks_per_sm, warps_per_sm, limiter, by_*},
//!   driver_blocks_per_sm}, sass {tool, census {kernel, total, opcodes}, attestation {status,
//!   ...}, excerpt (optional: the annotated SASS around the movement instructions)},
//!   completion, validation[] {case, view, grid, verdict {passed, checked_against, rel_l2,
//!   max_abs_err, nan, unwritten, beyond_tolerance, differs_from_baseline, wrong_tiles,
//!   first_wrong_tiles, first_wrong[] {row, col, got, expected}, failure}}, timing {device_ms[],
//!   device summary, host_submit_us[], host_submit summary, warmup, buffer_sets}, perf {gbps,
//!   pct_of_ceiling, speedup_vs_sync}
//! - `timelines[]` (run --timeline): variant, overlap {share, copy_cycles, compute_cycles,
//!   overlapped_cycles}, clean_ms, instrumented_ms, overhead, verdict, blocks[] (the decoded trace)
//! - `repeat` (optional): {variant, first, second, agrees}: the first timed variant measured again
//!   after all the others, and whether the medians agree within the reported min..max spread
//! - `notes[]`: anything the run wants a reader to know

pub mod chart;
pub mod compare;
pub mod formats;
pub mod gemm;
pub mod html;
pub mod peer;
pub mod table;

use crate::bench::stats::{Ceiling, Repeat, Timing};
use crate::check::{cases::Grid, compare::Verdict};
use crate::dtype::DType;
use crate::evidence::resources::Resources;
use crate::evidence::sass::SassEvidence;
use crate::gpu::DeviceInfo;
use crate::pipeline::{Control, Mechanism};
use crate::timeline::TimelineResult;
use crate::toolchain::Toolchain;
use crate::workload::View;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResults {
    pub schema_version: u32,
    pub tilepipe_version: String,
    pub created_unix_s: u64,
    pub command: Vec<String>,
    pub device: DeviceInfo,
    pub toolchain: Toolchain,
    pub workload: Workload,
    pub ceiling: Option<Ceiling>,
    pub cache: CacheRecord,
    pub variants: Vec<VariantResult>,
    /// Overlap figures from instrumented builds (run --timeline), never mixed with the timings above.
    #[serde(default)]
    pub timelines: Vec<TimelineResult>,
    /// The first timed variant measured again at the end of the run.
    #[serde(default)]
    pub repeat: Option<Repeat>,
    /// The same problem through other tools (`run --peers torch`), validated and timed alike.
    #[serde(default)]
    pub peers: Vec<peer::Peer>,
    pub notes: Vec<String>,
}

/// Cubin cache use over a run: builds served from the cache, builds compiled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheRecord {
    pub hits: u32,
    pub compiled: u32,
}

/// How one variant was built (the cubin itself is not kept).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuildRecord {
    pub cache_hit: bool,
    pub options: Vec<String>,
    /// NVRTC's warnings, if any.
    pub log: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Workload {
    pub name: String,
    pub formula: String,
    pub view: View,
    pub dtype: DType,
    pub tile_rows: usize,
    pub consumers: u32,
    pub seed: u64,
    /// The epsilon built into the kernel, where the formula has one.
    #[serde(default)]
    pub eps: Option<f64>,
    pub bytes_moved: u64,
}

/// Seconds since the Unix epoch, for `created_unix_s` (0 on a clock set before it).
pub fn now_unix_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Passed,
    Failed,
    Skipped,
    Error,
    /// Started but not finished: the run stopped (a hang, Ctrl-C) before it was validated and timed.
    Unfinished,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "FAILED",
            Status::Skipped => "skipped",
            Status::Error => "ERROR",
            Status::Unfinished => "not finished",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseResult {
    pub case: String,
    pub view: View,
    pub grid: Grid,
    pub blocks: u32,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Perf {
    pub gbps: f64,
    pub pct_of_ceiling: Option<f64>,
    pub speedup_vs_sync: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantResult {
    pub name: String,
    pub mechanism: Mechanism,
    pub stages: u32,
    pub bytes_per_copy: u32,
    pub control: Option<Control>,
    pub warp_specialized: bool,
    pub status: Status,
    pub detail: Option<String>,
    pub build: Option<BuildRecord>,
    pub resources: Option<Resources>,
    pub sass: Option<SassEvidence>,
    pub completion: String,
    pub validation: Vec<CaseResult>,
    pub timing: Option<Timing>,
    pub perf: Option<Perf>,
}

impl RunResults {
    pub fn write(&self, path: &Path) -> Result<()> {
        let json = serde_json::to_string_pretty(self).expect("results serialise");
        if let Some(dir) = path.parent() {
            crate::fsio::create_dir_all(dir)?;
        }
        crate::fsio::write_atomic(path, json.as_bytes())
    }

    pub fn read(path: &Path) -> Result<RunResults> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let r: RunResults = serde_json::from_str(&text).map_err(|e| Error::Format {
            path: path.into(),
            detail: e.to_string(),
        })?;
        if r.schema_version != SCHEMA_VERSION {
            return Err(Error::Format {
                path: path.into(),
                detail: format!(
                    "schema_version {} (this tilepipe reads {SCHEMA_VERSION})",
                    r.schema_version
                ),
            });
        }
        Ok(r)
    }

    pub fn baseline(&self) -> Option<&VariantResult> {
        self.variants
            .iter()
            .find(|v| v.mechanism == Mechanism::Sync && v.control.is_none())
    }
}
