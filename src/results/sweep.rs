//! One measured sweep point, as appended to sweep.jsonl, whichever workload: what it is (variant,
//! precision, configuration, its place on the workload's size axis, the stage alone where it is
//! a probe), how it was timed, how it was validated and on which GPU.

use super::Bound;
use crate::dtype::DType;
use crate::pipeline::Mechanism;
use serde::{Deserialize, Serialize};

fn rmsnorm() -> String {
    "rmsnorm".into()
}

fn memory() -> Bound {
    Bound::Memory
}

fn tiles() -> String {
    "tiles".into()
}

/// The resources of the build a point timed, where they bear on its figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointResources {
    pub registers: u32,
    pub dynamic_smem: u32,
    pub blocks_per_sm: u32,
    pub limiter: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub key: String,
    #[serde(default = "rmsnorm")]
    pub workload: String,
    #[serde(default = "memory")]
    pub bound: Bound,
    pub variant: String,
    /// The movement mechanism; None for a peer (torch), which has none of its own.
    pub mechanism: Option<Mechanism>,
    pub stages: u32,
    /// 0 whole pipeline, 1 copy stage alone, 2 compute stage alone.
    pub only: u32,
    pub dtype: DType,
    /// What fixes the point's configuration besides its size ("h4096 r2", "m4096 n4096 kn"):
    /// points of one configuration form a line.
    pub config: String,
    /// The workload's size axis ("tiles", "k") and this point's place on it.
    #[serde(default = "tiles")]
    pub axis: String,
    pub size: usize,
    pub blocks: u32,
    /// Pipeline steps each block walks (row tiles, K slices).
    pub steps_per_block: usize,
    pub bytes_moved: u64,
    #[serde(default)]
    pub flops: u64,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub rel_stdev: f64,
    pub host_submit_us: f64,
    pub gbps: f64,
    #[serde(default)]
    pub tflops: Option<f64>,
    /// The sweep's ceiling in the metric's unit: the copy's GB/s (memory-bound), or the vendor
    /// library's TFLOP/s at this point (compute-bound).
    pub ceiling: f64,
    #[serde(default)]
    pub resources: Option<PointResources>,
    /// Lowest and highest SM clock NVML read during the point's measurement (None without NVML).
    pub sm_clock_mhz: Option<(u32, u32)>,
    /// Set when the clocks moved during the point's measurement.
    #[serde(default)]
    pub clock_warning: Option<String>,
    pub validated: String,
    /// The GPU that measured the point: ordinal, name and UUID.
    #[serde(default)]
    pub gpu: Option<String>,
    /// A peer's version and math (`sweep --peers torch`); None for tilepipe's own variants.
    #[serde(default)]
    pub peer: Option<String>,
}

impl Record {
    /// One of tilepipe's own variants, not a peer.
    pub fn is_own(&self) -> bool {
        self.peer.is_none()
    }

    /// The point's figure in its workload's metric: GB/s, or TFLOP/s.
    pub fn figure(&self) -> f64 {
        match self.bound {
            Bound::Memory => self.gbps,
            Bound::Compute => self.tflops.unwrap_or(0.0),
        }
    }
}

/// The identity of a point: what `--resume` looks up. `point` is the workload's words for the
/// configuration and size ("h4096|r2|t1024").
pub fn key(variant: &str, only: u32, dtype: DType, point: &str) -> String {
    format!("{variant}|only{only}|{dtype}|{point}")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A bf16 RMSNorm point at hidden 4096, two-row tiles, on 528 blocks.
    pub(crate) fn record(variant: &str, only: u32, stages: u32, tiles: usize, ms: f64) -> Record {
        Record {
            key: key(variant, only, DType::Bf16, &format!("h4096|r2|t{tiles}")),
            workload: "rmsnorm".into(),
            bound: Bound::Memory,
            variant: variant.into(),
            mechanism: Some(if variant == "sync" {
                Mechanism::Sync
            } else {
                Mechanism::Cpasync
            }),
            stages,
            only,
            dtype: DType::Bf16,
            config: "h4096 r2".into(),
            axis: "tiles".into(),
            size: tiles,
            blocks: 528,
            steps_per_block: tiles.div_ceil(528),
            bytes_moved: tiles as u64 * 32768,
            flops: 0,
            median_ms: ms,
            min_ms: ms * 0.99,
            max_ms: ms * 1.01,
            rel_stdev: 0.005,
            host_submit_us: 3.0,
            gbps: tiles as f64 * 32768.0 / (ms * 1e-3) / 1e9,
            tflops: None,
            ceiling: 4200.0,
            resources: None,
            sm_clock_mhz: Some((1980, 1980)),
            clock_warning: None,
            validated: "test".into(),
            gpu: None,
            peer: None,
        }
    }
}
