//! Workloads: what a pipeline computes on its tiles. Each one is a folder holding its compute
//! body's host side (the f64 reference, tolerance, traffic) and names its kernel source; the
//! movement mechanisms and their loops are shared (`mechanism`, `kernels/pipeline/`).
//!
//! `rows` is the problem every workload here takes: row tiles of a strided, offset activation
//! view [tokens x hidden] (inputs, validation rules per mechanism, tensor map, kernel parameters).

pub mod copy;
pub mod gemm;
pub mod rmsnorm;
pub mod rows;
pub mod view;

pub use rows::HostData;
pub use view::View;

use crate::dtype::{DType, Tolerance};
use crate::pipeline::{BuildConfig, Variant};
use crate::{Error, Result};

/// A kernel source embedded in the binary and the entry point it defines (NVRTC names the source
/// `<entry>.cu` in errors and line info).
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// Its path under kernels/ (where TILEPIPE_KERNELS may replace it).
    pub file: &'static str,
    pub text: &'static str,
    pub entry: &'static str,
}

/// Bytes a perfect kernel moves through device memory, and the floating-point operations it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traffic {
    pub bytes: u64,
    pub flops: u64,
}

pub trait Workload: Sync + Send {
    fn name(&self) -> &'static str;
    /// The computation in one line, for tables and the report.
    fn formula(&self) -> &'static str;
    fn kernel(&self) -> KernelSource;
    /// The epsilon built into the kernel, where the formula has one.
    fn eps(&self) -> Option<f64> {
        None
    }

    /// The correct variants, sequential baseline first.
    fn catalogue(&self) -> Vec<Variant> {
        Variant::catalogue()
    }

    /// Deliberately broken variants; never timed or ranked.
    fn controls(&self) -> Vec<Variant> {
        Variant::controls()
    }

    /// `v` as it must be built to take every one of `views` (narrower copies, say), or unchanged.
    fn fit(&self, v: &Variant, views: &[View], cfg: &BuildConfig) -> Variant {
        rows::fit(v, views, cfg)
    }

    /// The catalogue, then the controls.
    fn variants(&self) -> Vec<Variant> {
        self.catalogue()
            .into_iter()
            .chain(self.controls())
            .collect()
    }

    /// Why `v` cannot take `view` (CUTLASS's can_implement): every skip carries its reason.
    fn can_implement(&self, v: &Variant, view: &View, cfg: &BuildConfig) -> Result<(), String> {
        rows::can_implement(v, view, cfg)
    }

    /// The -D options that shape this workload's build (the pipeline's own come from the variant).
    fn defines(&self, cfg: &BuildConfig) -> Vec<String> {
        rows::defines(cfg)
    }

    /// The per-column vector the kernel reads besides X (RMSNorm's gamma), seeded; empty if none.
    fn aux(&self, view: &View, dtype: DType, seed: u64) -> Vec<u8>;

    /// The f64 reference of one output row, from the same rounded inputs the GPU sees.
    fn reference_row(&self, data: &HostData, row: usize, out: &mut [f64]);

    /// Error bounds of an output of `dtype` against the f64 reference.
    fn tolerance(&self, dtype: DType) -> Tolerance;

    fn traffic(&self, view: &View, dtype: DType) -> Traffic;
}

/// Every workload, the default first.
pub fn all() -> [&'static dyn Workload; 2] {
    [&rmsnorm::RmsNorm, &copy::Copy]
}

/// The workload named `name`, or an error listing the names allowed.
pub fn by_name(name: &str) -> Result<&'static dyn Workload> {
    all().into_iter().find(|w| w.name() == name).ok_or_else(|| {
        let names: Vec<&str> = all().iter().map(|w| w.name()).collect();
        Error::InvalidArgument(format!(
            "no workload '{name}' (allowed: {})",
            names.join(", ")
        ))
    })
}
