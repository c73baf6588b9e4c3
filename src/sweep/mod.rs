//! Sweeps over named axes (nvbench style): every point is a function of its axis values, measured
//! points are appended to a JSONL file as they come (an interrupt loses nothing, `--resume` skips
//! what is there), and plots are drawn from the records.

pub mod measure;
pub mod plots;

use crate::dtype::DType;
use crate::variant::{Mechanism, Variant};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSpec {
    pub mechanisms: Vec<String>,
    pub stages: Vec<u32>,
    pub tiles: Vec<usize>,
    pub tile_rows: Vec<usize>,
    pub dtypes: Vec<DType>,
    /// Add copy-only and compute-only probes for the pipeline model.
    pub probes: bool,
}

pub const MECHANISMS: [&str; 8] = [
    "sync",
    "regprefetch",
    "cpasync",
    "mca-pipeline",
    "mca-barrier",
    "bulk",
    "tma",
    "tma-ws",
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
        }
    }
}

fn list<T: std::str::FromStr>(axis: &str, values: &str) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for v in values.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        if let Some((a, b)) = v.split_once("..") {
            let (a, b): (usize, usize) = (
                a.parse().map_err(|_| bad(axis, v))?,
                b.parse().map_err(|_| bad(axis, v))?,
            );
            for i in a..=b {
                out.push(i.to_string().parse().map_err(|_| bad(axis, v))?);
            }
        } else {
            out.push(v.parse().map_err(|_| bad(axis, v))?);
        }
    }
    if out.is_empty() {
        return Err(Error::InvalidArgument(format!("axis {axis} has no values")));
    }
    Ok(out)
}

fn bad(axis: &str, v: &str) -> Error {
    Error::InvalidArgument(format!(
        "axis {axis}: '{v}' is not a value (allowed: comma-separated values or a..b ranges)"
    ))
}

impl SweepSpec {
    /// Applies `name=values`; names: mechanism, stages, tiles, tile_rows, dtype.
    pub fn set_axis(&mut self, spec: &str) -> Result<()> {
        let (name, values) = spec.split_once('=').ok_or_else(|| {
            Error::InvalidArgument(format!(
                "--axis '{spec}': expected name=values, e.g. stages=1..6 or tiles=16,1024"
            ))
        })?;
        match name.trim() {
            "mechanism" => {
                let m: Vec<String> = list(name, values)?;
                if let Some(x) = m.iter().find(|x| !MECHANISMS.contains(&x.as_str())) {
                    return Err(Error::InvalidArgument(format!(
                        "mechanism '{x}' (allowed: {})",
                        MECHANISMS.join(", ")
                    )));
                }
                self.mechanisms = m;
            }
            "stages" => {
                let s: Vec<u32> = list(name, values)?;
                if s.iter().any(|&s| !(1..=8).contains(&s)) {
                    return Err(Error::InvalidArgument("stages: allowed 1..8".into()));
                }
                self.stages = s;
            }
            "tiles" => self.tiles = list(name, values)?,
            "tile_rows" => self.tile_rows = list(name, values)?,
            "dtype" => self.dtypes = list(name, values)?,
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
    pub fn variants(&self) -> Vec<Variant> {
        let catalogue = Variant::catalogue();
        let mut out: Vec<Variant> = Vec::new();
        let mut push = |v: Variant| {
            if !out.iter().any(|o| o.name == v.name) {
                out.push(v);
            }
        };
        for m in &self.mechanisms {
            for &s in &self.stages {
                let v = match (m.as_str(), s) {
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
                push(v);
            }
        }
        out
    }
}

/// One measured point, as appended to the JSONL file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub key: String,
    pub variant: String,
    pub mechanism: Mechanism,
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

/// Reads the records of a JSONL file; a torn last line (a crash mid-write) is skipped.
pub fn read(path: &Path) -> Result<Vec<Record>> {
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut out = Vec::new();
    for line in std::io::BufReader::new(f).lines() {
        let line = line.map_err(|e| Error::io(path, e))?;
        if let Ok(r) = serde_json::from_str::<Record>(&line) {
            out.push(r);
        }
    }
    Ok(out)
}

pub fn done_keys(path: &Path) -> Result<BTreeSet<String>> {
    Ok(read(path)?.into_iter().map(|r| r.key).collect())
}

/// Appends one record and flushes it to disk before returning.
pub fn append(path: &Path, r: &Record) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let line = serde_json::to_string(r).expect("records serialise");
    writeln!(f, "{line}")
        .and_then(|_| f.sync_data())
        .map_err(|e| Error::io(path, e))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn record(variant: &str, only: u32, stages: u32, tiles: usize, ms: f64) -> Record {
        Record {
            key: key(variant, only, DType::Bf16, 4096, 2, tiles),
            variant: variant.into(),
            mechanism: if variant == "sync" {
                Mechanism::Sync
            } else {
                Mechanism::Cpasync
            },
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
    fn variants_expand_mechanism_by_stages() {
        let mut s = SweepSpec::default();
        s.set_axis("mechanism=sync,cpasync,tma-ws").unwrap();
        s.set_axis("stages=1..3").unwrap();
        let names: Vec<String> = s.variants().into_iter().map(|v| v.name).collect();
        assert_eq!(
            names,
            [
                "sync",
                "cpasync-cg16-s2",
                "cpasync-cg16-s3",
                "tma-ws-s2",
                "tma-ws-s3"
            ]
        );
    }

    #[test]
    fn append_read_resume_and_torn_lines() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sweep.jsonl");
        assert!(read(&p).unwrap().is_empty());
        append(&p, &record("sync", 0, 1, 64, 0.1)).unwrap();
        append(&p, &record("cpasync-cg16-s2", 0, 2, 64, 0.09)).unwrap();
        // a crash mid-write leaves half a line
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"{\"key\": \"half")
            .unwrap();
        let r = read(&p).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].variant, "cpasync-cg16-s2");
        let keys = done_keys(&p).unwrap();
        assert!(keys.contains(&key("sync", 0, DType::Bf16, 4096, 2, 64)));
        assert!(!keys.contains(&key("sync", 0, DType::Bf16, 4096, 2, 128)));
    }
}
