//! Attention's problem: batch, heads, sequence length, head dimension, the causal mask and the
//! precision; Q, K, V and O each [batch x heads, seqlen, head dim], dense.

use crate::dtype::DType;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// The head dimensions the kernels are built for.
pub const HEAD_DIMS: [usize; 2] = [64, 128];

/// One attention forward pass: O = softmax(Q K^T / sqrt(head_dim) [+ causal mask]) V.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Problem {
    pub batch: usize,
    pub heads: usize,
    pub seqlen: usize,
    pub head_dim: usize,
    /// Key j is seen by query i only where j <= i.
    pub causal: bool,
    pub dtype: DType,
}

impl Problem {
    /// A problem the kernels can take: f16 or bf16 (tensor-core MMAs), a head dimension of 64 or
    /// 128, and every tensor indexable (element offsets within i32 rows and i64 totals).
    pub fn new(
        batch: usize,
        heads: usize,
        seqlen: usize,
        head_dim: usize,
        causal: bool,
        dtype: DType,
    ) -> Result<Problem> {
        if dtype == DType::F32 {
            return Err(Error::InvalidArgument(
                "--dtype f32: attention runs on 16-bit tensor-core MMAs (allowed: f16, bf16)"
                    .into(),
            ));
        }
        if !HEAD_DIMS.contains(&head_dim) {
            return Err(Error::InvalidShape(format!(
                "head dim {head_dim}: the kernels are built for 64 and 128"
            )));
        }
        for (name, v, max) in [
            ("batch", batch, 1 << 16),
            ("heads", heads, 1 << 16),
            ("seqlen", seqlen, 1 << 20),
        ] {
            if !(1..=max).contains(&v) {
                return Err(Error::InvalidShape(format!(
                    "{name} = {v}: allowed 1..={max}"
                )));
            }
        }
        let p = Problem {
            batch,
            heads,
            seqlen,
            head_dim,
            causal,
            dtype,
        };
        if p.elements() > i32::MAX as u64 * 2 {
            return Err(Error::InvalidShape(format!(
                "{}: {} elements a tensor, at most {}",
                p.label(),
                p.elements(),
                i32::MAX as u64 * 2
            )));
        }
        Ok(p)
    }

    /// Batch x heads: the heads the kernel walks.
    pub fn heads_total(&self) -> usize {
        self.batch * self.heads
    }

    /// Elements of one of Q, K, V, O.
    pub fn elements(&self) -> u64 {
        (self.heads_total() * self.seqlen * self.head_dim) as u64
    }

    /// The softmax scale, 1 / sqrt(head_dim).
    pub fn scale(&self) -> f64 {
        1.0 / (self.head_dim as f64).sqrt()
    }

    /// 4 b h s^2 d (two GEMMs of 2 b h s^2 d), halved under the causal mask, as FlashAttention
    /// counts them.
    pub fn flops(&self) -> u64 {
        let s = self.seqlen as u64;
        let full = 4 * self.heads_total() as u64 * s * s * self.head_dim as u64;
        if self.causal { full / 2 } else { full }
    }

    /// Host memory a run holds at once: Q, K and V as bytes and as f32 values (the reference reads
    /// those), and three Os (a variant's, `sync`'s and a peer's).
    pub fn host_bytes(&self) -> u64 {
        let es = self.dtype.size() as u64;
        3 * self.elements() * (es + 4) + 3 * self.elements() * es
    }

    pub fn label(&self) -> String {
        format!(
            "{}x{}x{}x{} {}{}",
            self.batch,
            self.heads,
            self.seqlen,
            self.head_dim,
            self.dtype,
            if self.causal { " causal" } else { "" }
        )
    }
}

impl crate::workload::Problem for Problem {
    fn dtype(&self) -> DType {
        self.dtype
    }

    fn label(&self) -> String {
        Problem::label(self)
    }

    fn host_bytes(&self) -> u64 {
        Problem::host_bytes(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_takes_what_the_kernels_can_and_says_what_it_cannot() {
        let p = Problem::new(2, 16, 4096, 128, true, DType::Bf16).unwrap();
        assert_eq!(p.label(), "2x16x4096x128 bf16 causal");
        assert_eq!(p.flops(), 4 * 32 * 4096 * 4096 * 128 / 2);
        assert_eq!(
            Problem::new(2, 16, 4096, 128, false, DType::Bf16)
                .unwrap()
                .flops(),
            2 * p.flops()
        );
        let e = Problem::new(1, 1, 64, 64, false, DType::F32).unwrap_err();
        assert!(e.to_string().contains("allowed: f16, bf16"), "{e}");
        let e = Problem::new(1, 1, 64, 96, false, DType::F16).unwrap_err();
        assert!(e.to_string().contains("64 and 128"), "{e}");
        let e = Problem::new(1, 0, 64, 64, false, DType::F16).unwrap_err();
        assert!(e.to_string().contains("heads = 0"), "{e}");
        assert!(Problem::new(1 << 16, 1 << 16, 1 << 20, 128, false, DType::F16).is_err());
    }
}
