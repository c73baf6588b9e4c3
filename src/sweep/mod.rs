//! Sweeps over named axes (nvbench style): every point is a function of its axis values, measured
//! points are appended to a JSONL file as they come (an interrupt loses nothing, `--resume` skips
//! what is there), and plots are drawn from the records.

pub mod measure;
pub mod merge;
pub mod peers;
pub mod plots;
pub mod shard;
pub mod store;

pub use store::{Loaded, Resumed, Skipped, append, measured, read, resume};

use crate::bench::{TimingOptions, stats::Timing};
use crate::dtype::DType;
use crate::pipeline::{Mechanism, Variant};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSpec {
    pub mechanisms: Vec<String>,
    pub stages: Vec<u32>,
    pub tiles: Vec<usize>,
    pub tile_rows: Vec<usize>,
    pub dtypes: Vec<DType>,
    /// Add copy-only and compute-only probes for the pipeline model.
    pub probes: bool,
    /// Also measure the torch peers at every tile count (`sweep --peers torch`).
    #[serde(default)]
    pub peers: bool,
}

/// The `-el` forms are the same pipelines with their copies carrying the L2 evict-last policy.
pub const MECHANISMS: [&str; 13] = [
    "sync",
    "regprefetch",
    "direct",
    "cpasync",
    "mca-pipeline",
    "mca-barrier",
    "bulk",
    "tma",
    "tma-ws",
    "cpasync-el",
    "bulk-el",
    "tma-el",
    "tma-ws-el",
];

impl Default for SweepSpec {
    fn default() -> Self {
        SweepSpec {
            mechanisms: vec!["sync".into(), "cpasync".into(), "tma".into()],
            stages: vec![2, 3, 4],
            tiles: vec![4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576],
            tile_rows: Vec::new(),
            dtypes: vec![DType::Bf16],
            probes: true,
            peers: false,
        }
    }
}

/// The most values one axis may hold: a slip such as tiles=1..1000000000 is refused, not expanded.
const MAX_AXIS_VALUES: usize = 4096;

/// What an axis takes, as its refusals say.
fn allowed(axis: &str) -> String {
    let ranges = "comma-separated, or a..b ranges";
    match axis {
        "mechanism" => MECHANISMS.join(", "),
        "stages" => format!("1..8, {ranges}, e.g. stages=1..4,6"),
        "tiles" => format!("whole numbers from 1, {ranges}, e.g. tiles=4,16,1024"),
        "tile_rows" => format!("whole numbers from 1, {ranges}, e.g. tile_rows=1,2,4"),
        // dtype, the last axis set_axis knows
        _ => DType::ALL.map(|d| d.to_string()).join(", "),
    }
}

fn refuse(axis: &str, v: &str) -> Error {
    Error::InvalidArgument(format!(
        "axis {axis}: '{v}' is not allowed (allowed: {})",
        allowed(axis)
    ))
}

/// The values of `axis`, each one parsed and accepted by `ok`.
fn list<T: std::str::FromStr>(axis: &str, values: &str, ok: impl Fn(&T) -> bool) -> Result<Vec<T>> {
    let mut out = Vec::new();
    let mut push = |v: &str, text: &str| -> Result<()> {
        let x: T = text
            .parse()
            .ok()
            .filter(|x| ok(x))
            .ok_or_else(|| refuse(axis, v))?;
        out.push(x);
        if out.len() > MAX_AXIS_VALUES {
            return Err(Error::InvalidArgument(format!(
                "axis {axis}: more than {MAX_AXIS_VALUES} values"
            )));
        }
        Ok(())
    };
    for v in values.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        match v.split_once("..") {
            Some((a, b)) => {
                let (a, b): (usize, usize) = match (a.trim().parse(), b.trim().parse()) {
                    (Ok(a), Ok(b)) if a <= b => (a, b),
                    _ => return Err(refuse(axis, v)),
                };
                for i in a..=b {
                    push(v, &i.to_string())?;
                }
            }
            None => push(v, v)?,
        }
    }
    if out.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "axis {axis} has no values (allowed: {})",
            allowed(axis)
        )));
    }
    Ok(out)
}

impl SweepSpec {
    /// Applies `name=values`; names: mechanism, stages, tiles, tile_rows, dtype.
    pub fn set_axis(&mut self, spec: &str) -> Result<()> {
        let (name, values) = spec.split_once('=').ok_or_else(|| {
            Error::InvalidArgument(format!(
                "--axis '{spec}': expected name=values, e.g. stages=1..6 or tiles=16,1024"
            ))
        })?;
        let name = name.trim();
        match name {
            "mechanism" => {
                self.mechanisms = list(name, values, |m: &String| MECHANISMS.contains(&m.as_str()))?
            }
            "stages" => self.stages = list(name, values, |s| (1..=8).contains(s))?,
            "tiles" => self.tiles = list(name, values, |&t| t >= 1)?,
            "tile_rows" => self.tile_rows = list(name, values, |&r| r >= 1)?,
            "dtype" => self.dtypes = list(name, values, |_| true)?,
            other => {
                return Err(Error::InvalidArgument(format!(
                    "unknown axis '{other}' (allowed: mechanism, stages, tiles, tile_rows, dtype)"
                )));
            }
        }
        Ok(())
    }

    /// The variants the mechanism and stages axes name. Single-stage mechanisms ignore stages;
    /// 1 stage of a pipelined mechanism is the sequential baseline, listed once as sync.
    /// The tile heights swept at `dtype`: the axis's, or the default height.
    pub fn heights(&self, hidden: usize, dtype: DType) -> Vec<usize> {
        if self.tile_rows.is_empty() {
            vec![crate::pipeline::BuildConfig::default_tile_rows(
                hidden, dtype,
            )]
        } else {
            self.tile_rows.clone()
        }
    }

    pub fn variants(&self) -> Vec<Variant> {
        let catalogue = Variant::catalogue();
        let mut out: Vec<Variant> = Vec::new();
        let mut push = |v: Variant| {
            if !out.iter().any(|o| o.name == v.name) {
                out.push(v);
            }
        };
        for m in &self.mechanisms {
            let (m, evict_last) = match m.strip_suffix("-el") {
                Some(base) => (base, true),
                None => (m.as_str(), false),
            };
            for &s in &self.stages {
                let v = match (m, s) {
                    ("direct", _) => Variant::direct(1),
                    ("sync", _) | (_, 1) => catalogue[0].clone(),
                    ("regprefetch", _) => catalogue[1].clone(),
                    ("cpasync", s) => Variant::with_stages(Mechanism::Cpasync, s, false),
                    ("mca-pipeline", s) => {
                        Variant::with_stages(Mechanism::MemcpyAsyncPipeline, s, false)
                    }
                    ("mca-barrier", s) => {
                        Variant::with_stages(Mechanism::MemcpyAsyncBarrier, s, false)
                    }
                    ("bulk", s) => Variant::with_stages(Mechanism::Bulk, s, false),
                    ("tma", s) => Variant::with_stages(Mechanism::Tma, s, false),
                    (_, s) => Variant::with_stages(Mechanism::Tma, s, true),
                };
                // one stage is the sequential baseline, which copies nothing a policy could mark
                push(if evict_last && s > 1 {
                    v.evict_last()
                } else {
                    v
                });
            }
        }
        out
    }
}

/// A sweep as measured on one GPU: the spec, the problem's constants, where the points go and
/// which of them this process measures.
pub struct SweepOptions {
    pub spec: SweepSpec,
    pub hidden: usize,
    pub seed: u64,
    pub jsonl: PathBuf,
    pub resume: bool,
    pub timing: TimingOptions,
    /// Measure only this shard's points.
    pub shard: Option<shard::Shard>,
    /// Measure only this worker's variants (`sweep --devices`: whole variants per GPU).
    pub worker: Option<shard::Shard>,
    /// `--peers torch`: the Python that runs them (worker 0 measures them).
    pub torch_python: Option<PathBuf>,
}

/// What a point is, before it is measured.
pub struct PointId {
    pub key: String,
    pub variant: String,
    pub mechanism: Option<Mechanism>,
    pub stages: u32,
    pub only: u32,
    pub dtype: DType,
    pub hidden: usize,
    pub tile_rows: usize,
    pub tiles: usize,
    pub blocks: u32,
    pub tiles_per_block: usize,
}

/// How a point was validated, where it ran, and which peer it is (None: one of ours).
pub struct Provenance {
    pub validated: String,
    pub gpu: String,
    pub peer: Option<String>,
}

/// One measured point, as appended to the JSONL file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub key: String,
    pub variant: String,
    /// The movement mechanism; None for a peer (torch), which has none of its own.
    pub mechanism: Option<Mechanism>,
    pub stages: u32,
    /// 0 whole pipeline, 1 copy stage alone, 2 compute stage alone.
    pub only: u32,
    pub dtype: DType,
    pub hidden: usize,
    pub tile_rows: usize,
    pub tiles: usize,
    pub blocks: u32,
    pub tiles_per_block: usize,
    pub bytes_moved: u64,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub rel_stdev: f64,
    pub host_submit_us: f64,
    pub gbps: f64,
    pub ceiling_gbps: f64,
    /// Lowest and highest SM clock NVML read during the point's measurement (None without NVML).
    pub sm_clock_mhz: Option<(u32, u32)>,
    /// Set when the clocks moved during the point's measurement.
    #[serde(default)]
    pub clock_warning: Option<String>,
    pub validated: String,
    /// The GPU that measured the point: ordinal, name and UUID (older files lack it).
    #[serde(default)]
    pub gpu: Option<String>,
    /// A peer's version and math (`sweep --peers torch`); None for tilepipe's own variants.
    #[serde(default)]
    pub peer: Option<String>,
}

impl Record {
    /// The point `id` as timed by `t`, moving `bytes` per launch.
    pub fn measured(
        id: PointId,
        t: &Timing,
        bytes: u64,
        ceiling_gbps: f64,
        from: Provenance,
    ) -> Record {
        Record {
            key: id.key,
            variant: id.variant,
            mechanism: id.mechanism,
            stages: id.stages,
            only: id.only,
            dtype: id.dtype,
            hidden: id.hidden,
            tile_rows: id.tile_rows,
            tiles: id.tiles,
            blocks: id.blocks,
            tiles_per_block: id.tiles_per_block,
            bytes_moved: bytes,
            median_ms: t.device.median,
            min_ms: t.device.min,
            max_ms: t.device.max,
            rel_stdev: t.device.rel_stdev,
            host_submit_us: t.host_submit.median,
            gbps: crate::bench::gbps(bytes, t.device.median),
            ceiling_gbps,
            sm_clock_mhz: t.clocks.as_ref().and_then(|c| c.sm_range()),
            clock_warning: t.clocks.as_ref().and_then(|c| c.warning.clone()),
            validated: from.validated,
            gpu: Some(from.gpu),
            peer: from.peer,
        }
    }

    /// One of tilepipe's own variants, not a peer.
    pub fn is_own(&self) -> bool {
        self.peer.is_none()
    }
}

/// The identity of a point: what `--resume` looks up.
pub fn key(
    variant: &str,
    only: u32,
    dtype: DType,
    hidden: usize,
    tile_rows: usize,
    tiles: usize,
) -> String {
    format!("{variant}|only{only}|{dtype}|h{hidden}|r{tile_rows}|t{tiles}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn record(variant: &str, only: u32, stages: u32, tiles: usize, ms: f64) -> Record {
        Record {
            key: key(variant, only, DType::Bf16, 4096, 2, tiles),
            variant: variant.into(),
            mechanism: Some(if variant == "sync" {
                Mechanism::Sync
            } else {
                Mechanism::Cpasync
            }),
            stages,
            only,
            dtype: DType::Bf16,
            hidden: 4096,
            tile_rows: 2,
            tiles,
            blocks: 528,
            tiles_per_block: tiles.div_ceil(528),
            bytes_moved: tiles as u64 * 32768,
            median_ms: ms,
            min_ms: ms * 0.99,
            max_ms: ms * 1.01,
            rel_stdev: 0.005,
            host_submit_us: 3.0,
            gbps: tiles as f64 * 32768.0 / (ms * 1e-3) / 1e9,
            ceiling_gbps: 4200.0,
            sm_clock_mhz: Some((1980, 1980)),
            clock_warning: None,
            validated: "test".into(),
            gpu: None,
            peer: None,
        }
    }

    #[test]
    fn axes_parse_ranges_and_reject_unknowns() {
        let mut s = SweepSpec::default();
        s.set_axis("stages=1..3,6").unwrap();
        assert_eq!(s.stages, vec![1, 2, 3, 6]);
        s.set_axis("tiles=4,1048576").unwrap();
        assert_eq!(s.tiles, vec![4, 1048576]);
        s.set_axis("mechanism=sync,tma-ws").unwrap();
        assert!(
            s.set_axis("mechanism=warp")
                .unwrap_err()
                .to_string()
                .contains("allowed")
        );
        assert!(s.set_axis("stages=9").is_err());
        assert!(
            s.set_axis("colour=red")
                .unwrap_err()
                .to_string()
                .contains("unknown axis")
        );
        assert!(
            s.set_axis("tiles")
                .unwrap_err()
                .to_string()
                .contains("name=values")
        );
        assert!(
            s.set_axis("tiles=x")
                .unwrap_err()
                .to_string()
                .contains("'x'")
        );
    }

    #[test]
    fn a_refused_axis_value_lists_what_the_axis_takes() {
        let mut s = SweepSpec::default();
        let err = |s: &mut SweepSpec, a: &str| s.set_axis(a).unwrap_err().to_string();
        assert_eq!(
            err(&mut s, "dtype=bf16,fp8"),
            "invalid argument: axis dtype: 'fp8' is not allowed (allowed: f32, f16, bf16)"
        );
        assert!(err(&mut s, "mechanism=warp").contains("'warp' is not allowed (allowed: sync, "));
        assert!(err(&mut s, "stages=9").contains("'9' is not allowed (allowed: 1..8, "));
        for bad in ["tiles=0", "tiles=8..2", "tiles=-1", "tile_rows=0,1"] {
            let e = err(&mut s, bad);
            assert!(e.contains("allowed: whole numbers from 1"), "{bad}: {e}");
        }
        assert!(err(&mut s, "tiles=1..1000000000").contains("more than 4096 values"));
        assert!(err(&mut s, "dtype= ,").contains("no values (allowed: f32, f16, bf16)"));
        // nothing refused was applied
        assert_eq!(s, SweepSpec::default());
        s.set_axis(" dtype = f32, BF16").unwrap();
        assert_eq!(s.dtypes, [DType::F32, DType::Bf16]);
    }

    #[test]
    fn variants_expand_mechanism_by_stages() {
        let expand = |mechanisms: &str, stages: &str| -> Vec<String> {
            let mut s = SweepSpec::default();
            s.set_axis(mechanisms).unwrap();
            s.set_axis(stages).unwrap();
            s.variants().into_iter().map(|v| v.name).collect()
        };
        // sync and direct have no stages: one point each
        let plain = expand("mechanism=sync,direct,cpasync,tma-ws", "stages=1..3");
        let want = [
            "sync",
            "direct",
            "cpasync-cg16-s2",
            "cpasync-cg16-s3",
            "tma-ws-s2",
            "tma-ws-s3",
        ];
        assert_eq!(plain, want);
        // the -el forms: the same pipelines with the policy; one stage is still sync
        let el = expand(
            "mechanism=cpasync-el,bulk-el,tma-el,tma-ws-el",
            "stages=1,2",
        );
        let want = [
            "sync",
            "cpasync-cg16-s2-el",
            "bulk-s2-el",
            "tma-s2-el",
            "tma-ws-s2-el",
        ];
        assert_eq!(el, want);
        let mut s = SweepSpec::default();
        s.set_axis("mechanism=tma-el").unwrap();
        assert!(s.variants().iter().all(|v| v.l2_evict_last));
        assert!(s.set_axis("mechanism=direct-el").is_err());
    }
}
