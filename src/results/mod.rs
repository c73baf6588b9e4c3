//! The one result structure every output is rendered from, for every workload: results.json
//! (schema below), the terminal tables, report.html. Plain data: the engine fills it in, the
//! renderers read it. `RunResults<P>` is generic over the workload's problem; read back without
//! knowing the workload, `P` is `serde_json::Value`.
//!
//! results.json, schema_version 2:
//! - `tilepipe_version` (the package version and the commit built, "0.1.0 (930eb83)"),
//!   `created_unix_s`, `command` (argv)
//! - `device`: name, arch, SMs, memory, L2, shared-memory and register limits, clocks, driver and
//!   NVRTC versions (see gpu::DeviceInfo)
//! - `toolchain`: include folders, nvdisasm / cuobjdump / compute-sanitizer paths
//! - `workload`: name, formula, bound (memory | compute), problem (in words), dtype, eps,
//!   bytes_moved, flops
//! - `problem`: the workload's own problem (a row view {view {tokens, hidden, row_stride, offset,
//!   alloc}, dtype, tile_rows}, or a GEMM {m, n, k, layout, dtype}), and `seed`
//! - `ceiling` (memory-bound): the device-to-device copy measured in the same run: bytes_copied,
//!   samples_ms, time summary, gbps (read + written), the copy that set it
//! - `vendor` (compute-bound): the vendor library on the same problem (cuBLAS), validated and
//!   timed as the variants are
//! - `cache`: hits, compiled
//! - `variants[]`: name, mechanism, stages, bytes_per_copy, control, warp_specialized, tile,
//!   status (passed | failed | skipped | error | unfinished), detail (reason or failure), build
//!   {cache_hit, options, log}, resources {threads, function {registers, static_smem,
//!   local_bytes, max_threads}, dynamic_smem, slot_footprint, occupancy {blocks_per_sm,
//!   warps_per_sm, limiter, by_*}, driver_blocks_per_sm}, sass {tool, census {kernel, total,
//!   opcodes}, attestation {status, ...}, excerpt}, math (the workload's claimed math, where it
//!   has one), completion, validation[] {case, problem, grid, blocks, verdicts[] {passed,
//!   checked_against, checked, rel_l2, max_abs_err, max_ratio, nan, unwritten,
//!   beyond_tolerance, differs_from_baseline, wrong_tiles, first_wrong_tiles, first_wrong[]
//!   {row, col, got, expected}, failure}}, timing {device_ms[], device summary,
//!   host_submit_us[], host_submit summary, warmup, buffer_sets, host_bound_samples, clocks},
//!   perf {gbps, tflops, pct_of_ceiling, ceiling_clocks, speedup_vs_sync,
//!   speedup_vs_regprefetch}
//! - `timelines[]` (run --timeline): variant, overlap {share, copy_cycles, compute_cycles,
//!   overlapped_cycles}, clean_ms, instrumented_ms, overhead, verdict, blocks[] (the decoded trace:
//!   per tile `at` [5], and `body` [warpgroup][5] where the compute body records its MMAs and
//!   softmax), softmax (optional) {softmax_cycles, under_own_mma, under_other_mma}
//! - `repeat` (optional): {variant, first, second, agrees}: a reference measured again after all
//!   the others, and whether the medians agree within the reported min..max spread
//! - `peers[]` (`--peers torch`): other tools on the same problem, validated and timed alike
//! - `ladder[]`: the workload's optimisation steps, each with its fastest variant {step, variant,
//!   figure, unit}
//! - `notes[]`: anything the run wants a reader to know

pub mod check;
pub mod peer;
pub mod sweep;
pub mod sweep_store;
pub mod timeline;
pub mod timing;

pub use check::{ControlRuns, Finding, SuiteReport, TestResult};
pub use peer::Peer;
pub use timeline::TimelineResult;
pub use timing::{Ceiling, Repeat, SizedCopy, Timing};

use crate::dtype::DType;
use crate::evidence::resources::Resources;
use crate::evidence::sass::{Attestation, SassEvidence};
use crate::gpu::DeviceInfo;
use crate::pipeline::{Control, Mechanism};
use crate::toolchain::Toolchain;
use crate::verdict::Verdict;
use crate::{Error, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const SCHEMA_VERSION: u32 = 2;

/// What bounds a workload's speed, and so what its variants are measured against: the device's
/// own copy bandwidth (measured in the same run), or the vendor library on the same problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Memory,
    Compute,
}

/// How many blocks a validation launch uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "blocks")]
pub enum Grid {
    /// What timing uses: a block per tile, or as many as can be resident for a persistent
    /// variant, never more than there are tiles.
    Persistent,
    /// A fixed count: small to make every block walk many tiles, or above the tile count to
    /// leave blocks with no tile at all.
    Fixed(u32),
    /// Tile count plus this many blocks that own nothing.
    Idle(u32),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResults<P> {
    pub schema_version: u32,
    pub tilepipe_version: String,
    pub created_unix_s: u64,
    pub command: Vec<String>,
    pub device: DeviceInfo,
    pub toolchain: Toolchain,
    pub workload: WorkloadInfo,
    pub problem: P,
    pub seed: u64,
    /// The device-to-device copy ceiling (memory-bound workloads).
    pub ceiling: Option<Ceiling>,
    /// The vendor library on the same problem (compute-bound workloads).
    #[serde(default)]
    pub vendor: Option<Peer>,
    /// Where no vendor library ran beside a compute-bound workload (attention): the peer whose
    /// speed the shares of the ceiling are taken against, the fastest that passed validation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling_peer: Option<String>,
    pub cache: CacheRecord,
    pub variants: Vec<VariantResult>,
    /// Overlap figures from instrumented builds (run --timeline), never mixed with the timings above.
    #[serde(default)]
    pub timelines: Vec<TimelineResult>,
    /// A reference measured again at the end of the run.
    #[serde(default)]
    pub repeat: Option<Repeat>,
    /// The same problem through other tools (`run --peers torch`), validated and timed alike.
    #[serde(default)]
    pub peers: Vec<Peer>,
    /// The workload's ladder of optimisation steps, where it has one: each step's fastest
    /// variant in this run.
    #[serde(default)]
    pub ladder: Vec<LadderStep>,
    pub notes: Vec<String>,
}

/// One step of a workload's ladder as a run measured it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LadderStep {
    /// What the step adds over the one before.
    pub step: String,
    pub variant: String,
    /// The run's metric for it (TFLOP/s, or GB/s for a memory-bound workload).
    pub figure: f64,
    pub unit: String,
}

/// The workload of a run as the reader sees it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkloadInfo {
    pub name: String,
    pub formula: String,
    pub bound: Bound,
    /// The problem in words.
    pub problem: String,
    pub dtype: DType,
    /// The epsilon built into the kernel, where the formula has one.
    #[serde(default)]
    pub eps: Option<f64>,
    /// What a perfect kernel moves through device memory, and computes.
    pub bytes_moved: u64,
    pub flops: u64,
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

/// One variant's validation on one case: every verdict must pass.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseResult {
    pub case: String,
    /// The case's problem in words.
    pub problem: String,
    pub grid: Grid,
    pub blocks: u32,
    pub verdicts: Vec<Verdict>,
}

/// The figures of a median time.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Perf {
    /// Bytes a perfect kernel moves / median time.
    pub gbps: f64,
    /// Floating-point operations / median time, where the workload computes.
    #[serde(default)]
    pub tflops: Option<f64>,
    /// Share of the run's ceiling: the copy bandwidth (memory-bound) or the vendor library's
    /// TFLOP/s (compute-bound).
    pub pct_of_ceiling: Option<f64>,
    /// Why `pct_of_ceiling` is not a comparison at one SM clock, if it is not (shown with a `*`).
    #[serde(default)]
    pub ceiling_clocks: Option<String>,
    /// Compute-bound: the share of the vendor library's speed in alternating batches at one SM
    /// clock (`timing::Matched`), the figure the table shows where there is one.
    #[serde(default)]
    pub matched: Option<timing::Matched>,
    pub speedup_vs_sync: Option<f64>,
    /// Over the register double buffer on the same tile (pre-Ampere pipelining).
    #[serde(default)]
    pub speedup_vs_regprefetch: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantResult {
    pub name: String,
    pub mechanism: Mechanism,
    pub stages: u32,
    pub bytes_per_copy: u32,
    pub control: Option<Control>,
    pub warp_specialized: bool,
    /// The tile it computes, in words.
    pub tile: String,
    pub status: Status,
    pub detail: Option<String>,
    pub build: Option<BuildRecord>,
    pub resources: Option<Resources>,
    pub sass: Option<SassEvidence>,
    /// Does the SASS do the math the workload claims (tensor-core MMAs, say)? None where the
    /// workload claims none.
    #[serde(default)]
    pub math: Option<Attestation>,
    pub completion: String,
    /// What the checking build (stress sleeps and the protocol monitor; validated, never timed)
    /// takes: registers, static shared memory, local bytes. Beside `resources`, the monitor's cost.
    #[serde(default)]
    pub checking: Option<crate::gpu::FunctionResources>,
    pub validation: Vec<CaseResult>,
    pub timing: Option<Timing>,
    pub perf: Option<Perf>,
}

impl VariantResult {
    /// The first failure stands: a later stage never overwrites why a variant stopped.
    pub fn fail(&mut self, status: Status, detail: String) {
        if self.status == Status::Passed {
            self.status = status;
            self.detail = Some(detail);
        }
    }
}

/// GB/s of `bytes` in `ms`.
pub fn gbps(bytes: u64, ms: f64) -> f64 {
    bytes as f64 / (ms * 1e-3) / 1e9
}

/// TFLOP/s of `flops` in `ms`.
pub fn tflops(flops: u64, ms: f64) -> f64 {
    flops as f64 / (ms * 1e9)
}

impl<P: Serialize + DeserializeOwned> RunResults<P> {
    pub fn write(&self, path: &Path) -> Result<()> {
        let json = serde_json::to_string_pretty(self).expect("results serialise");
        if let Some(dir) = path.parent() {
            crate::fsio::create_dir_all(dir)?;
        }
        crate::fsio::write_atomic(path, json.as_bytes())
    }

    /// Reads a `results.json` (or the same gzipped, `.json.gz`); a file of another kind is named
    /// with the command that reads it.
    pub fn read(path: &Path) -> Result<RunResults<P>> {
        let text = read_text(path)?;
        let format = |detail: String| Error::Format {
            path: path.into(),
            detail,
        };
        let value: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                return Err(format(other_kind(&text).unwrap_or(format!(
                    "not JSON ({e}): allowed: a run's results.json (`tilepipe run --out` writes it)"
                ))));
            }
        };
        if let Some(kind) = other_kind(&text) {
            return Err(format(kind));
        }
        let version = value.get("schema_version").and_then(|v| v.as_u64());
        if version != Some(SCHEMA_VERSION as u64) {
            return Err(format(format!(
                "schema_version {} (this tilepipe reads {SCHEMA_VERSION})",
                version.map_or("missing".into(), |v| v.to_string())
            )));
        }
        serde_json::from_value(value).map_err(|e| format(e.to_string()))
    }
}

/// A file's text, gunzipped where its name ends in `.gz`.
fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    if path.extension().is_none_or(|x| x != "gz") {
        return String::from_utf8(bytes).map_err(|_| Error::Format {
            path: path.into(),
            detail: "not text: a results.json is JSON".into(),
        });
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
        .map_err(|e| Error::Format {
            path: path.into(),
            detail: format!("not a gzipped results.json: {e}"),
        })?;
    Ok(text)
}

/// What a file that is not a run's results.json is, and which command reads it, where its text
/// says so: a suite's check.json, a sweep's sweep.jsonl or spec.
fn other_kind(text: &str) -> Option<String> {
    // a JSONL file's first line is a document; a pretty-printed file's is not
    let first: Option<serde_json::Value> = serde_json::from_str(text.lines().next()?).ok();
    let whole: Option<serde_json::Value> = serde_json::from_str(text).ok();
    let is = |v: &serde_json::Value, keys: &[&str]| keys.iter().all(|k| v.get(k).is_some());
    let what = if whole.as_ref().is_some_and(|v| is(v, &["tests"])) {
        "a suite's check.json (`tilepipe check --out` writes it)"
    } else if first
        .as_ref()
        .is_some_and(|v| is(v, &["key", "workload", "median_ms"]))
    {
        "a sweep's sweep.jsonl (`tilepipe model --from` and `tilepipe merge` read it)"
    } else if whole.as_ref().is_some_and(|v| is(v, &["shard", "spec"])) {
        "a sweep shard's spec (`tilepipe merge` reads the sweep.jsonl beside it)"
    } else {
        return None;
    };
    Some(format!(
        "this is {what}, not a run's results.json (`tilepipe run --out` writes that)"
    ))
}

impl<P> RunResults<P> {
    pub fn baseline(&self) -> Option<&VariantResult> {
        self.variants
            .iter()
            .find(|v| v.mechanism == Mechanism::Sync && v.control.is_none())
    }
}
