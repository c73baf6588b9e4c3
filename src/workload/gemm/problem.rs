//! The GEMM's problem: M, N, K, B's layout and the precision, with its strides and sizes.

use crate::dtype::DType;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// How B is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// B [K x N] row-major: C = A * B.
    Kn,
    /// B [N x K] row-major (weights): C = A * B^T.
    Nk,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::Kn => "kn",
            Layout::Nk => "nk",
        }
    }
}

/// One GEMM: its shape, B's layout and the precision of A, B and C. Matrices are dense.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Problem {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub layout: Layout,
    pub dtype: DType,
}

impl Problem {
    /// A problem whose every dimension is at least 1 and whose matrices the kernels can index
    /// (element offsets within i32 rows and i64 totals).
    pub fn new(m: usize, n: usize, k: usize, layout: Layout, dtype: DType) -> Result<Problem> {
        const MAX: usize = 1 << 20;
        for (name, v) in [("M", m), ("N", n), ("K", k)] {
            if !(1..=MAX).contains(&v) {
                return Err(Error::InvalidShape(format!(
                    "{name} = {v}: allowed 1..={MAX}"
                )));
            }
        }
        Ok(Problem {
            m,
            n,
            k,
            layout,
            dtype,
        })
    }

    pub fn lda(&self) -> usize {
        self.k
    }

    /// B's row stride: N for [K x N], K for [N x K].
    pub fn ldb(&self) -> usize {
        match self.layout {
            Layout::Kn => self.n,
            Layout::Nk => self.k,
        }
    }

    pub fn ldc(&self) -> usize {
        self.n
    }

    pub fn flops(&self) -> u64 {
        2 * self.m as u64 * self.n as u64 * self.k as u64
    }

    /// Host memory a run of this problem holds at once: A and B as bytes and as f32 values (the
    /// reference reads those), and three Cs (a variant's, `sync`'s and cuBLAS's).
    pub fn host_bytes(&self) -> u64 {
        let es = self.dtype.size() as u64;
        let inputs = (self.m * self.k + self.k * self.n) as u64;
        inputs * (es + 4) + 3 * (self.m * self.n) as u64 * es
    }

    /// B[kk][j] as an element index into B's buffer, whichever the layout.
    pub fn b_index(&self, kk: usize, j: usize) -> usize {
        match self.layout {
            Layout::Kn => kk * self.n + j,
            Layout::Nk => j * self.k + kk,
        }
    }

    pub fn label(&self) -> String {
        format!(
            "{}x{}x{} {} B[{}]",
            self.m,
            self.n,
            self.k,
            self.dtype,
            match self.layout {
                Layout::Kn => "KxN",
                Layout::Nk => "NxK",
            }
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
    fn strides_follow_the_layout() {
        let p = Problem::new(3, 5, 7, Layout::Kn, DType::F32).unwrap();
        assert_eq!((p.lda(), p.ldb(), p.ldc()), (7, 5, 5));
        assert_eq!(p.b_index(2, 4), 14);
        let q = Problem {
            layout: Layout::Nk,
            ..p
        };
        assert_eq!(q.ldb(), 7);
        assert_eq!(q.b_index(2, 4), 30);
        assert_eq!(p.flops(), 210);
    }

    #[test]
    fn empty_dimensions_are_refused_with_the_range() {
        let e = Problem::new(0, 5, 7, Layout::Kn, DType::F32)
            .unwrap_err()
            .to_string();
        assert!(e.contains("M = 0") && e.contains("allowed"), "{e}");
    }
}
