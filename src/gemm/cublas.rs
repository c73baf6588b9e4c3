//! cuBLAS beside tilepipe's kernels: the same problem on the same stream, its C a second reference
//! for the numbers, its time measured by the same loop. Missing cuBLAS is a skip with its reason.

use super::kernel::Buffers;
use crate::Result;
use crate::bench::{Repeat, TimingOptions, time_with};
use crate::gpu::cublas::{Blas, GemmDesc};
use crate::harness::{Engine, HANG_LIMIT};
use crate::report::Status;
use crate::report::gemm::{Peer, tflops};
use crate::workload::gemm::Layout;

/// How cuBLAS is asked to compute: f32 accumulation, never TF32.
const MATH: &str = "cublasGemmEx, CUBLAS_COMPUTE_32F with the default math mode (TF32 off), A, B and C in the run's precision";

pub struct Library(std::result::Result<Blas, String>);

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

impl Library {
    pub fn open(e: &Engine) -> Library {
        Library(e.gpu.blas())
    }

    /// The peer's row before it ran: skipped with the reason when cuBLAS cannot be loaded.
    pub fn peer(&self) -> Peer {
        let (status, detail, version) = match &self.0 {
            Ok(b) => (Status::Passed, None, b.version().ok()),
            Err(why) => (Status::Skipped, Some(why.clone()), None),
        };
        Peer {
            status,
            detail,
            ..Peer::new("cuBLAS", version, MATH)
        }
    }

    /// cuBLAS's C for the problem in `d` (its own output buffer), or None without cuBLAS.
    pub fn reference_c(&self, e: &Engine, d: &mut Buffers) -> Result<Option<Vec<u8>>> {
        let Ok(b) = &self.0 else { return Ok(None) };
        let mut c = e.gpu.alloc(d.c.len(), "cuBLAS's C")?;
        b.gemm(&desc(d), &d.a, &d.b, &mut c)?;
        e.gpu.finish("cuBLAS", HANG_LIMIT)?;
        Ok(Some(e.gpu.download(&c)?))
    }

    /// cuBLAS timed on the problem in `d` exactly as the variants are, into `peer` (unless it was
    /// skipped or failed validation).
    pub fn time(
        &self,
        e: &Engine,
        d: &mut Buffers,
        opts: &TimingOptions,
        peer: &mut Peer,
    ) -> Result<()> {
        let Ok(b) = &self.0 else { return Ok(()) };
        if peer.status != Status::Passed {
            return Ok(());
        }
        let g = desc(d);
        let (a, bm, c) = (&d.a, &d.b, &mut d.c);
        let t = time_with(e, "cuBLAS", 1, opts, |_| b.gemm(&g, a, bm, c))?;
        peer.tflops = Some(tflops(d.problem.flops(), t.device.median));
        peer.timing = Some(t);
        Ok(())
    }

    /// cuBLAS timed once more, after everything else in the run, against its first timing in
    /// `first`: it ran first, on a GPU not yet at its power limit (None if it was not timed).
    pub fn again(
        &self,
        e: &Engine,
        d: &mut Buffers,
        opts: &TimingOptions,
        first: &Peer,
    ) -> Result<Option<Repeat>> {
        let Some(before) = first.timing.as_ref().map(|t| t.device) else {
            return Ok(None);
        };
        let mut second = first.clone();
        self.time(e, d, opts, &mut second)?;
        Ok(second
            .timing
            .map(|t| Repeat::new(&first.name, before, t.device)))
    }
}
