//! cuBLAS beside tilepipe's kernels: the same problem on the same stream, its C a second reference
//! for the numbers, its time what the variants are measured against. Missing cuBLAS is a skip
//! with its reason.

use super::Layout;
use super::data::Buffers;
use crate::Result;
use crate::gpu::cublas::{Blas, GemmDesc};
use crate::gpu::{Gpu, HANG_LIMIT};
use crate::results::Peer;
use crate::workload::Vendor;

/// How cuBLAS is asked to compute: f32 accumulation, never TF32.
const MATH: &str = "cublasGemmEx, CUBLAS_COMPUTE_32F with the default math mode (TF32 off), A, B and C in the run's precision";

pub struct CuBlas(pub Blas);

fn desc(d: &Buffers) -> GemmDesc {
    let p = d.problem;
    GemmDesc {
        m: p.m,
        n: p.n,
        k: p.k,
        b_nk: p.layout == Layout::Nk,
        dtype: p.dtype,
        lda: p.lda(),
        ldb: p.ldb(),
        ldc: p.ldc(),
    }
}

impl Vendor<Buffers> for CuBlas {
    fn peer(&self) -> Peer {
        Peer::new("cuBLAS", self.0.version().ok(), MATH)
    }

    fn output(&self, gpu: &Gpu, d: &Buffers) -> Result<Vec<u8>> {
        let mut c = gpu.alloc(d.c.len(), "cuBLAS's C")?;
        self.0.gemm(&desc(d), &d.a, &d.b, &mut c)?;
        gpu.finish("cuBLAS", HANG_LIMIT)?;
        gpu.download(&c)
    }

    fn launch(&self, _gpu: &Gpu, d: &mut Buffers) -> Result<()> {
        let g = desc(d);
        self.0.gemm(&g, &d.a, &d.b, &mut d.c)
    }
}

/// The peer's row when cuBLAS cannot be loaded: skipped, with the reason.
pub fn missing(why: &str) -> Peer {
    Peer::skipped("cuBLAS", why.to_string())
}
