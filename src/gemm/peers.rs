//! torch beside the GEMM: torch.matmul and torch.compile's Triton matmul on the user's problem,
//! judged against what the variants are judged against (the f64 reference on the same elements,
//! cuBLAS's C) and timed hot, as the variants and cuBLAS are.

use super::GemmOptions;
use super::kernel::Buffers;
use crate::harness::Engine;
use crate::peers::{GemmCase, TorchRequest};
use crate::report::peer::Peer;
use crate::workload::gemm::data::Inputs;
use std::path::Path;

/// The user's problem as validation leaves it: its device buffers (kept for timing), its inputs,
/// the elements the reference checks, and cuBLAS's C when cuBLAS passed.
pub struct UserCase {
    pub d: Buffers,
    pub x: Inputs,
    pub elements: Vec<(usize, usize)>,
    pub cublas_c: Option<Vec<u8>>,
}

pub fn torch(e: &Engine, o: &GemmOptions, u: &UserCase, python: &Path) -> Vec<Peer> {
    e.progress
        .note("running the torch peers (torch.compile autotunes Triton's matmul first)");
    let req = TorchRequest {
        python: python.into(),
        device: e.info().ordinal,
        workload: "gemm",
        eps: None,
        buffer_sets: 1,
        timing: o.timing,
        ceiling_gbps: None,
        baseline_ms: None,
    };
    let case = GemmCase {
        inputs: &u.x,
        elements: &u.elements,
        cublas_c: u.cublas_c.as_deref(),
    };
    crate::peers::torch_gemm(&req, &case, &|| e.clock())
}
