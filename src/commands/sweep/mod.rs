//! Sweeps over named axes (nvbench style), for any workload: every point is a function of its
//! axis values (mechanism, stages, precision, the workload's size axis, and its tile height where
//! it has one), measured points are appended to a JSONL file as they come (an interrupt loses
//! nothing, `--resume` skips what is there), and plots are drawn from the records.

pub mod measure;
pub mod merge;
mod peers;
mod record;
pub mod shard;

pub use measure::sweep;

use crate::dtype::DType;
use crate::pipeline::Variant;
use crate::results::timing::TimingOptions;
use crate::workload::Workload;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSpec {
    pub mechanisms: Vec<String>,
    pub stages: Vec<u32>,
    /// The workload's size axis (row tiles, K).
    pub sizes: Vec<usize>,
    /// Tile heights, where the workload tiles rows (empty: the default height).
    pub tile_rows: Vec<usize>,
    pub dtypes: Vec<DType>,
    /// Add copy-only and compute-only probes for the pipeline model (where the workload has them).
    pub probes: bool,
    /// Also measure the torch peers at every size (`sweep --peers torch`).
    #[serde(default)]
    pub peers: bool,
}

/// The most values one axis may hold: a slip such as tiles=1..1000000000 is refused, not expanded.
const MAX_AXIS_VALUES: usize = 4096;

/// What an axis takes, as its refusals say.
fn allowed<W: Workload>(w: &W, axis: &str) -> String {
    let ranges = "comma-separated, or a..b ranges";
    match axis {
        "mechanism" => w.sweep_mechanisms().0.join(", "),
        "stages" => format!("1..8, {ranges}, e.g. stages=1..4,6"),
        "dtype" => DType::ALL.map(|d| d.to_string()).join(", "),
        name => format!("whole numbers from 1, {ranges}, e.g. {name}=4,16,1024"),
    }
}

/// The values of `axis`, each one parsed and accepted by `ok`.
fn list<W: Workload, T: std::str::FromStr + PartialEq>(
    w: &W,
    axis: &str,
    values: &str,
    ok: impl Fn(&T) -> bool,
) -> Result<Vec<T>> {
    let refuse = |v: &str| {
        Error::InvalidArgument(format!(
            "axis {axis}: '{v}' is not allowed (allowed: {})",
            allowed(w, axis)
        ))
    };
    let mut out = Vec::new();
    let mut push = |v: &str, text: &str| -> Result<()> {
        let x: T = text
            .parse()
            .ok()
            .filter(|x| ok(x))
            .ok_or_else(|| refuse(v))?;
        if out.contains(&x) {
            // its points would be measured twice, under one key
            return Err(Error::InvalidArgument(format!(
                "axis {axis}: '{text}' is given twice (in '{values}'): allowed: each value once"
            )));
        }
        out.push(x);
        if out.len() > MAX_AXIS_VALUES {
            return Err(Error::InvalidArgument(format!(
                "axis {axis}: more than {MAX_AXIS_VALUES} values"
            )));
        }
        Ok(())
    };
    if values.contains(',') && values.split(',').any(|v| v.trim().is_empty()) {
        return Err(Error::InvalidArgument(format!(
            "axis {axis}: '{values}' has an empty entry: allowed: values separated by single commas"
        )));
    }
    for v in values.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        match v.split_once("..") {
            Some((a, b)) => {
                let (a, b): (usize, usize) = match (a.trim().parse(), b.trim().parse()) {
                    (Ok(a), Ok(b)) if a <= b => (a, b),
                    _ => return Err(refuse(v)),
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
            allowed(w, axis)
        )));
    }
    Ok(out)
}

impl SweepSpec {
    /// The workload's default sweep.
    pub fn default_for<W: Workload>(w: &W) -> SweepSpec {
        let (_, mechanisms, stages) = w.sweep_mechanisms();
        SweepSpec {
            mechanisms: mechanisms.iter().map(|m| m.to_string()).collect(),
            stages: stages.to_vec(),
            sizes: w.sweep_axis().1.to_vec(),
            tile_rows: Vec::new(),
            dtypes: vec![DType::Bf16],
            probes: w.stage_probes(),
            peers: false,
        }
    }

    /// Applies `name=values`; names: mechanism, stages, dtype, the workload's size axis, and
    /// tile_rows where the workload has it.
    pub fn set_axis<W: Workload>(&mut self, w: &W, spec: &str) -> Result<()> {
        let (name, values) = spec.split_once('=').ok_or_else(|| {
            Error::InvalidArgument(format!(
                "--axis '{spec}': expected name=values, e.g. stages=1..6 or {}=16,1024",
                w.sweep_axis().0
            ))
        })?;
        let name = name.trim();
        let size = w.sweep_axis().0;
        let names = w.sweep_mechanisms().0;
        match name {
            "mechanism" => {
                self.mechanisms = list(w, name, values, |m: &String| names.contains(&m.as_str()))?
            }
            "stages" => self.stages = list(w, name, values, |s| (1..=8).contains(s))?,
            "dtype" => self.dtypes = list(w, name, values, |_| true)?,
            "tile_rows" if w.tile_axis() => self.tile_rows = list(w, name, values, |&r| r >= 1)?,
            n if n == size => self.sizes = list(w, name, values, |&t| t >= 1)?,
            other => {
                let tile = if w.tile_axis() { ", tile_rows" } else { "" };
                return Err(Error::InvalidArgument(format!(
                    "unknown axis '{other}' for --workload {} (allowed: mechanism, stages, {size}{tile}, dtype)",
                    w.name()
                )));
            }
        }
        Ok(())
    }

    /// The tile heights swept: the axis's, or the workload's default (None).
    pub fn heights(&self) -> Vec<Option<usize>> {
        match self.tile_rows.is_empty() {
            true => vec![None],
            false => self.tile_rows.iter().map(|&r| Some(r)).collect(),
        }
    }

    /// The variants the mechanism and stages axes name in `dtype`, each once; a `-el` mechanism
    /// is the same pipeline with its copies carrying the L2 evict-last policy (one stage, the
    /// sequential baseline, copies nothing a policy could mark).
    pub fn variants<W: Workload>(&self, w: &W, dtype: DType) -> Vec<Variant<W::Shape>> {
        let mut out: Vec<Variant<W::Shape>> = Vec::new();
        for m in &self.mechanisms {
            let (m, evict_last) = match m.strip_suffix("-el") {
                Some(base) => (base, true),
                None => (m.as_str(), false),
            };
            for &s in &self.stages {
                let Some(v) = w.sweep_variant(m, s, dtype) else {
                    continue;
                };
                let v = match evict_last && s > 1 && v.takes_l2_policy() {
                    true => v.evict_last(),
                    false => v,
                };
                if !out.iter().any(|o| o.name == v.name) {
                    out.push(v);
                }
            }
        }
        out
    }
}

/// A sweep as measured on one GPU: the spec, the problem the command line describes, where the
/// points go and which of them this process measures.
pub struct SweepOptions<P> {
    pub spec: SweepSpec,
    pub base: P,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rmsnorm::RmsNorm;
    use crate::workload::rows::Rows;

    const W: Rows = Rows(&RmsNorm);

    fn spec() -> SweepSpec {
        SweepSpec::default_for(&W)
    }

    #[test]
    fn axes_parse_ranges_and_reject_unknowns() {
        let mut s = spec();
        s.set_axis(&W, "stages=1..3,6").unwrap();
        assert_eq!(s.stages, vec![1, 2, 3, 6]);
        s.set_axis(&W, "tiles=4,1048576").unwrap();
        assert_eq!(s.sizes, vec![4, 1048576]);
        s.set_axis(&W, "mechanism=sync,tma-ws").unwrap();
        assert!(
            s.set_axis(&W, "mechanism=warp")
                .unwrap_err()
                .to_string()
                .contains("allowed")
        );
        assert!(s.set_axis(&W, "stages=9").is_err());
        assert!(
            s.set_axis(&W, "colour=red")
                .unwrap_err()
                .to_string()
                .contains("unknown axis")
        );
        assert!(
            s.set_axis(&W, "tiles")
                .unwrap_err()
                .to_string()
                .contains("name=values")
        );
        assert!(
            s.set_axis(&W, "tiles=x")
                .unwrap_err()
                .to_string()
                .contains("'x'")
        );
    }

    #[test]
    fn a_refused_axis_value_lists_what_the_axis_takes() {
        let mut s = spec();
        let err = |s: &mut SweepSpec, a: &str| s.set_axis(&W, a).unwrap_err().to_string();
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
        assert!(err(&mut s, "dtype= ").contains("no values (allowed: f32, f16, bf16)"));
        assert!(err(&mut s, "dtype= ,").contains("has an empty entry"));
        assert!(err(&mut s, "stages=1,,2").contains("has an empty entry"));
        assert!(err(&mut s, "tiles=4,4").contains("'4' is given twice"));
        assert!(err(&mut s, "stages=1..3,2").contains("'2' is given twice"));
        // nothing refused was applied
        assert_eq!(s, spec());
        s.set_axis(&W, " dtype = f32, BF16").unwrap();
        assert_eq!(s.dtypes, [DType::F32, DType::Bf16]);
    }

    #[test]
    fn variants_expand_mechanism_by_stages() {
        let expand = |mechanisms: &str, stages: &str| -> Vec<String> {
            let mut s = spec();
            s.set_axis(&W, mechanisms).unwrap();
            s.set_axis(&W, stages).unwrap();
            s.variants(&W, DType::Bf16)
                .into_iter()
                .map(|v| v.name)
                .collect()
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
        let mut s = spec();
        s.set_axis(&W, "mechanism=tma-el").unwrap();
        assert!(s.variants(&W, DType::Bf16).iter().all(|v| v.l2_evict_last));
        assert!(s.set_axis(&W, "mechanism=direct-el").is_err());
    }
}
