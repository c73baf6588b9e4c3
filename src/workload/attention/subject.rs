//! Attention as its peers see it: Q, K and V, validated against the f64 reference on the checked
//! rows as the variants are; timed as TFLOP/s (4 b h s^2 d, halved for causal).

use super::data::Inputs;
use super::reference;
use crate::peers::{Subject, TorchRequest};
use crate::results::{Peer, Perf, tflops};
use serde_json::{Value, json};

/// SDPA with each of torch's backends, and flex_attention.
pub const PEER_NAMES: [&str; 5] = [
    "SDPA, flash",
    "SDPA, memory-efficient",
    "SDPA, cuDNN",
    "SDPA, math",
    "flex_attention",
];

pub struct AttnSubject<'a> {
    pub inputs: &'a Inputs,
}

impl Subject for AttnSubject<'_> {
    fn names(&self) -> Vec<&'static str> {
        PEER_NAMES.to_vec()
    }

    fn files(&self) -> Vec<(&'static str, &'static str, &[u8])> {
        vec![
            ("q", "q.bin", self.inputs.q.as_slice()),
            ("k", "k.bin", self.inputs.k.as_slice()),
            ("v", "v.bin", self.inputs.v.as_slice()),
        ]
    }

    fn script(&self) -> String {
        include_str!("torch.py").to_string()
    }

    fn spec(&self) -> Value {
        let p = &self.inputs.problem;
        json!({
            "dtype": p.dtype.to_string(),
            "attention": {
                "batch": p.batch,
                "heads": p.heads,
                "seqlen": p.seqlen,
                "head_dim": p.head_dim,
                "causal": p.causal,
            },
        })
    }

    fn output(&self) -> (usize, String) {
        let p = &self.inputs.problem;
        (
            p.elements() as usize * p.dtype.size(),
            format!(
                "a dense [{} x {} x {} x {}] {} O",
                p.batch, p.heads, p.seqlen, p.head_dim, p.dtype
            ),
        )
    }

    fn judge(&self, out: &[u8]) -> (String, Option<String>) {
        let v = reference::against_reference(out, self.inputs);
        (v.summary(), (!v.passed).then(|| v.summary()))
    }

    fn perf(&self, _req: &TorchRequest, median_ms: f64, p: &mut Peer) {
        p.perf = Some(Perf {
            tflops: Some(tflops(self.inputs.problem.flops(), median_ms)),
            ..Perf::default()
        });
    }
}
