//! A GEMM as its peers see it: A and B, validated against the f64 reference on the checked
//! elements and cuBLAS's C on every element, as the GEMM variants are; timed as TFLOP/s.

use super::data::Inputs;
use super::reference;
use crate::peers::{Subject, TorchRequest};
use crate::results::{Peer, Perf, tflops};
use serde_json::{Value, json};

/// torch's matmul (cuBLAS underneath) and Triton's, through torch.compile.
pub const PEER_NAMES: [&str; 2] = ["torch.matmul", "torch.compile, Triton matmul"];

pub struct GemmSubject<'a> {
    pub inputs: &'a Inputs,
    /// cuBLAS's C, when cuBLAS ran and passed.
    pub cublas_c: Option<&'a [u8]>,
}

impl Subject for GemmSubject<'_> {
    fn names(&self) -> Vec<&'static str> {
        PEER_NAMES.to_vec()
    }

    fn files(&self) -> Vec<(&'static str, &'static str, &[u8])> {
        vec![
            ("a", "a.bin", self.inputs.a.as_slice()),
            ("b", "b.bin", self.inputs.b.as_slice()),
        ]
    }

    fn script(&self) -> String {
        include_str!("torch.py").to_string()
    }

    fn spec(&self) -> Value {
        let p = &self.inputs.problem;
        json!({
            "dtype": p.dtype.to_string(),
            "gemm": {"m": p.m, "n": p.n, "k": p.k, "layout": p.layout.name()},
        })
    }

    fn output(&self) -> (usize, String) {
        let p = &self.inputs.problem;
        (
            p.m * p.n * p.dtype.size(),
            format!("a dense [{} x {}] {} C", p.m, p.n, p.dtype),
        )
    }

    fn judge(&self, out: &[u8]) -> (String, Option<String>) {
        let p = &self.inputs.problem;
        let mut verdicts = vec![reference::against_reference(out, self.inputs)];
        if let Some(c) = self.cublas_c {
            verdicts.push(reference::against_cublas(out, c, p));
        }
        let checked: Vec<String> = verdicts.iter().map(|v| v.summary()).collect();
        let failure = verdicts.iter().find(|v| !v.passed).map(|v| v.summary());
        (checked.join("; "), failure)
    }

    fn perf(&self, _req: &TorchRequest, median_ms: f64, p: &mut Peer) {
        p.perf = Some(Perf {
            tflops: Some(tflops(self.inputs.problem.flops(), median_ms)),
            ..Perf::default()
        });
    }
}
