//! RMSNorm + GELU over row tiles: Y = gelu(X * rsqrt(mean(X^2) + eps) * gamma), gelu in its tanh
//! form; its compute body is kernels/rmsnorm.cu.

use super::KernelSource;
use super::rows::{HostData, RowBody, View, uniform_vector};
use crate::dtype::{DType, Tolerance};

/// The epsilon the kernel is built with (EPS in kernels/rmsnorm.cu).
pub const EPS: f64 = 1e-6;

pub struct RmsNorm;

impl RowBody for RmsNorm {
    fn name(&self) -> &'static str {
        "rmsnorm"
    }

    fn formula(&self) -> &'static str {
        "Y = gelu_tanh(X * rsqrt(mean(X^2) + eps) * gamma), X a strided view, Y dense"
    }

    fn kernel(&self) -> KernelSource {
        KernelSource {
            file: "rmsnorm.cu",
            text: include_str!("../../../kernels/rmsnorm.cu"),
            entry: "tilepipe_rmsnorm",
            headers: &[],
        }
    }

    fn eps(&self) -> Option<f64> {
        Some(EPS)
    }

    /// gamma, uniform in [0.5, 1.5).
    fn aux(&self, view: &View, dtype: DType, seed: u64) -> Vec<u8> {
        uniform_vector(view.hidden, 0.5..1.5, dtype, seed)
    }

    fn torch(&self) -> &'static str {
        include_str!("torch.py")
    }

    fn reference_row(&self, data: &HostData, row: usize, out: &mut [f64]) {
        let h = data.view.hidden;
        let mut ss = 0.0f64;
        for (c, o) in out.iter_mut().enumerate().take(h) {
            let v = data.x_at(row, c);
            *o = v;
            ss += v * v;
        }
        let inv = 1.0 / (ss / h as f64 + EPS).sqrt();
        for (c, o) in out.iter_mut().enumerate().take(h) {
            *o = gelu(*o * inv * data.dtype.get(&data.aux, c));
        }
    }

    fn tolerance(&self, dtype: DType) -> Tolerance {
        dtype.tolerance()
    }

    /// As kernels/rmsnorm.cu spells it (a multiply-add counts 2): the square-accumulate (2), the normalisation and gamma multiplies (2), and gelu's
    /// v*v, multiply-add, multiply, 2^x, add, reciprocal and multiply (8): 12.
    fn flops_per_element(&self) -> u64 {
        12
    }
}

/// gelu, tanh form: v * sigmoid(2u), u = sqrt(2/pi) (v + 0.044715 v^3).
pub fn gelu(v: f64) -> f64 {
    let two_u = 2.0 * (2.0 / std::f64::consts::PI).sqrt() * (v + 0.044715 * v * v * v);
    v / (1.0 + (-two_u).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gelu_matches_hand_values() {
        // tanh-form gelu: 0 -> 0; 1 -> 0.8411920; -1 -> -0.1588080; 3 -> 2.9963627
        assert_eq!(gelu(0.0), 0.0);
        assert!((gelu(1.0) - 0.841_192_0).abs() < 1e-6);
        assert!((gelu(-1.0) + 0.158_808_0).abs() < 1e-6);
        assert!((gelu(3.0) - 2.996_362_7).abs() < 1e-6);
    }

    #[test]
    fn reference_row_by_hand() {
        // one row [3, 4] (f32), gamma [1, 0.5]: mean(x^2) = 12.5, inv = 1/sqrt(12.5 + 1e-6)
        let view = View::new(1, 4, None, 0, None, DType::F32).unwrap();
        let p = crate::workload::rows::RowProblem::new(view, DType::F32, Some(1));
        let mut d = HostData::generate(&RmsNorm, &p, 1);
        d.x.clear();
        for v in [3.0f32, 4.0, 0.0, 0.0] {
            DType::F32.push(v, &mut d.x);
        }
        d.aux.clear();
        for v in [1.0f32, 0.5, 1.0, 1.0] {
            DType::F32.push(v, &mut d.aux);
        }
        let mut out = [0.0; 4];
        d.reference_row(0, &mut out);
        let inv = 1.0 / (25.0f64 / 4.0 + EPS).sqrt();
        assert!((out[0] - gelu(3.0 * inv)).abs() < 1e-15);
        assert!((out[1] - gelu(4.0 * inv * 0.5)).abs() < 1e-15);
        assert_eq!(out[2], 0.0);
        // 3 * 0.4 = 1.2 -> gelu(1.2) = 1.0617028 (0.5 v (1 + tanh(...)) by hand)
        assert!((out[0] - 1.061_702_8).abs() < 1e-6, "{}", out[0]);
    }

    #[test]
    fn gamma_is_seeded_and_never_constant() {
        let view = View::new(2, 64, None, 0, None, DType::Bf16).unwrap();
        let g = RmsNorm.aux(&view, DType::Bf16, 3);
        assert_eq!(g.len(), 64 * 2);
        let vals: Vec<f64> = (0..64).map(|i| DType::Bf16.get(&g, i)).collect();
        assert!(vals.iter().all(|v| (0.5..1.5).contains(v)));
        assert!(vals.iter().any(|v| *v != vals[0]));
        assert_eq!(g, RmsNorm.aux(&view, DType::Bf16, 3));
    }
}
